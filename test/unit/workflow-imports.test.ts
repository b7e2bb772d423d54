/**
 * Workflow code is bundled for Temporal's sandbox: it may not reach a Node built-in (node:crypto, fs, …) through
 * anything it imports, however indirectly. Type-only imports are erased and do not count. The lint rule checks
 * each file's direct imports; this follows them all.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../helpers/fixtures';

/** The value imports of a TypeScript file (not `import type`, not `export type`). */
function valueImports(file: string): string[] {
  const src = fs.readFileSync(file, 'utf8');
  const specs: string[] = [];
  for (const m of src.matchAll(/^(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)) specs.push(m[1]!);
  return specs;
}

function resolveLocal(from: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const base = path.resolve(path.dirname(from), spec);
  for (const f of [`${base}.ts`, path.join(base, 'index.ts')]) if (fs.existsSync(f)) return f;
  throw new Error(`${from}: cannot resolve ${spec}`);
}

test('nothing the workflows import reaches a Node built-in', () => {
  const seen = new Map<string, string[]>(); // file → the chain that reached it
  const reached: string[] = [];
  const visit = (file: string, chain: string[]) => {
    if (seen.has(file)) return;
    seen.set(file, chain);
    for (const spec of valueImports(file)) {
      if (spec.startsWith('node:') || ['fs', 'path', 'crypto', 'child_process', 'os'].includes(spec))
        reached.push([...chain, file, spec].map((f) => path.relative(ROOT, f) || f).join(' → '));
      const local = resolveLocal(file, spec);
      if (local && !local.includes(`${path.sep}activities${path.sep}`)) visit(local, [...chain, file]);
    }
  };
  visit(path.join(ROOT, 'workflows', 'index.ts'), []);
  expect(seen.size).toBeGreaterThan(10); // it did follow the imports
  expect(reached).toEqual([]);
});
