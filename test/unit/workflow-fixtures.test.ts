/**
 * docs/architecture.md: every workflow type has a recorded history that test/replay/replay.test.ts replays. The
 * workflow types are what workflows/index.ts exports as functions (queries, signals and updates are objects).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../helpers/fixtures';

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

test('every workflow type has a history fixture named after it', () => {
  const workflows = require('../../workflows') as Record<string, unknown>;
  const types = Object.entries(workflows)
    .filter(([, v]) => typeof v === 'function')
    .map(([name]) => name);
  expect(types).toContain('evaluateCandidate'); // it did read the exports
  const fixtures = new Set(fs.readdirSync(path.join(ROOT, 'test', 'fixtures', 'histories')));
  expect(types.filter((t) => !fixtures.has(`${kebab(t)}.json`))).toEqual([]);
});
