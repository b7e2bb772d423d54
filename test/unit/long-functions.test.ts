/**
 * Functions stay short, by rule: `vero/max-lines-per-function` (lint/long-functions.cjs) runs in `npm run lint`
 * over the product's code. These tests check the rule itself through ESLint's own Linter, and that its
 * allowance (lint/long-functions.json, the functions already longer when the rule came) only shrinks.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Linter } from 'eslint';
import * as tsParser from '@typescript-eslint/parser';
import { ROOT } from '../helpers/fixtures';

const longFunctions = require('../../lint/long-functions.cjs');

/** The allowance's size when the rule came. Lower it as entries leave; it never goes up. */
const ALLOWANCE_CAP = 5;

/** An allowance key, "file.ts: Kind 'name'", as its file and ESLint's name of the function. */
function splitKey(key: string): { file: string; kindAndName: string } {
  const at = key.indexOf(': ');
  return { file: key.slice(0, at), kindAndName: key.slice(at + 2) };
}

function lint(file: string, code: string): Linter.LintMessage[] {
  const linter = new Linter({ configType: 'flat' });
  const config = [
    {
      files: ['**/*.ts'],
      languageOptions: { parser: tsParser as Linter.Parser },
      plugins: { vero: longFunctions },
      rules: { 'vero/max-lines-per-function': 'error' as const },
    },
  ];
  return linter.verify(code, config, { filename: path.join(ROOT, file) });
}

function functionOf(name: string, statements: number): string {
  const body = Array.from({ length: statements }, (_, i) => `  total += ${i};\n  // a comment line is not counted\n\n`).join('');
  return `export function ${name}(): number {\n  let total = 0;\n${body}  return total;\n}\n`;
}

test('the allowance only shrinks: at most the cap, unique entries, each naming a file that exists', () => {
  const allowance = longFunctions.loadAllowance() as Map<string, number>;
  const allowed = [...allowance.keys()];
  expect([...allowance.values()].every((n) => Number.isInteger(n) && n > 60)).toBe(true);
  expect(allowed.length).toBeLessThanOrEqual(ALLOWANCE_CAP);
  const missing = allowed.map((key) => splitKey(key).file).filter((file) => !fs.existsSync(path.join(ROOT, file)));
  expect(missing).toEqual([]);
});

test('a new function over 60 lines is an error; one of 60 is not; blank and comment lines do not count', () => {
  const over = lint('model/new-module.ts', functionOf('tooLong', 57));
  expect(over.map((m) => m.message)).toEqual(["Function 'tooLong' has 61 lines (at most 60): split it into named steps"]);
  expect(lint('model/new-module.ts', functionOf('justRight', 56))).toEqual([]);
});

test('an allowed function may stay as long as it was, not grow; once it is short, its entry is stale and must go', () => {
  // A stand-in file for an allowed function declaration that is its file's only entry (ESLint names it with its
  // kind, "Async function 'x'", so the stand-in keeps that kind).
  const allowance = longFunctions.loadAllowance() as Map<string, number>;
  const allowed = [...allowance.keys()];
  const fileOf = (key: string) => splitKey(key).file;
  const entry = allowed.find((key) => /: (Async f|F)unction '/.test(key) && allowed.filter((k) => fileOf(k) === fileOf(key)).length === 1);
  if (!entry) throw new Error('no allowed function declaration to stand in for: rewrite this test over a synthetic allowance');
  const { file, kindAndName } = splitKey(entry);
  const name = /'([^']+)'/.exec(kindAndName)?.[1] ?? '';
  const asDeclared = (lines: number) =>
    functionOf(name, lines).replace('export function', kindAndName.startsWith('Async') ? 'export async function' : 'export function');
  const most = allowance.get(entry)!;
  expect(lint(file, asDeclared(most - 4))).toEqual([]); // a function of N statements has N + 4 lines
  expect(lint(file, asDeclared(most - 3)).map((m) => m.message)).toEqual([
    `${kindAndName} has ${most + 1} lines, more than the ${most} lint/long-functions.json allows it: split out the new lines`,
  ]);
  expect(lint(file, asDeclared(10)).map((m) => m.message)).toEqual([
    `${entry} is in lint/long-functions.json but is no longer over 60 lines (or is gone): remove it`,
  ]);
});
