/**
 * Rules the guide states about the project as a whole, checked over every tracked file so new code cannot break
 * them unseen.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../helpers/fixtures';

const TEXT = /\.(ts|js|mjs|cjs|md|sh|py|ya?ml|json|toml|txt)$|^(\.ci\/run|scripts\/[^/]+|bin\/[^/]+|Dockerfile)$/;

function trackedTextFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 });
  return out
    .split('\0')
    .filter((f) => f && TEXT.test(f) && !f.startsWith('test/fixtures/') && f !== 'package-lock.json')
    .filter((f) => fs.existsSync(path.join(ROOT, f)));
}

test('the project speaks of itself only: no issue or session numbers in code, docs, tests or benchmark output', () => {
  // "issue N", "issue #N", "session N", "(#N)" with N a number: the tracker's and the sessions' numbers, which mean nothing to
  // a reader of the tree. References to another project's numbered items (vero.md §6.1 #2) stay allowed.
  const patterns = [/\bissues? #?\d+/i, /\bsessions? \d+\b/i, /\(#\d+\)/];
  const hits: string[] = [];
  for (const f of trackedTextFiles()) {
    if (f === 'test/unit/project-rules.test.ts') continue;
    const lines = fs.readFileSync(path.join(ROOT, f), 'utf8').split('\n');
    for (const [i, line] of lines.entries())
      if (patterns.some((p) => p.test(line))) hits.push(`${f}:${i + 1}: ${line.trim().slice(0, 120)}`);
  }
  expect(hits).toEqual([]);
});
