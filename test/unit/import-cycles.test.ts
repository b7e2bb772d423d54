/**
 * No import cycle among the project's modules, type-only imports included: each module depends on what is below
 * it (docs/architecture.md's module map), so each can be read, tested and changed on its own.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { importCycles, importsOf } from '../helpers/import-cycles';
import { tempDir } from '../helpers/fixtures';

const ROOT = path.resolve(__dirname, '..', '..');

test('the project has no import cycle, type-only imports included', () => {
  expect(importCycles(ROOT)).toEqual([]);
});

test('the analysis sees every kind of import, and a cycle through any of them', () => {
  const dir = tempDir('import-cycles');
  const write = (name: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  };
  write('a.ts', "import type { B } from './b';\nexport type A = B;\n");
  write('b.ts', "export type { A } from './a';\nexport type B = number;\n");
  write('c.ts', "// import { d } from './d';\nexport const c = () => require('./d');\n");
  write('d.ts', "export const d = import('./e');\n");
  write('e.ts', "import { c } from './c';\nexport const e: typeof import('./f') | null = null;\nvoid c;\n");
  write('f.ts', 'export const s = "from \'./a\'";\n');
  write('test/g.ts', "import './h';\n");
  write('h.ts', "import './test/g';\n");
  expect(importsOf(path.join(dir, 'c.ts'))).toEqual([{ spec: './d', typeOnly: false }]);
  expect(importsOf(path.join(dir, 'e.ts'))).toEqual([
    { spec: './c', typeOnly: false },
    { spec: './f', typeOnly: true },
  ]);
  expect(importCycles(dir)).toEqual([
    ['a.ts', 'b.ts'],
    ['c.ts', 'd.ts', 'e.ts'],
  ]);
});
