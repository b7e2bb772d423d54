/**
 * model/ is in rooms by concept (docs/architecture.md): every room (a folder of model/) has a README.md whose one
 * paragraph says what it owns, and only the cross-cutting files stay at model/'s top.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../helpers/fixtures';

const MODEL = path.join(ROOT, 'model');

/** The files every room uses, which belong to none of them. A new file goes in a room (or a new room). */
const ALLOWED_TOP_LEVEL = [
  'cli-json.ts',
  'command-line.ts',
  'config-issues.ts',
  'durations.ts',
  'errors.ts',
  'failures.ts',
  'json-case.ts',
  'paths.ts',
  'query-views.ts',
  'shell-word.ts',
  'worker-identity.ts',
];

const rooms = () =>
  fs
    .readdirSync(MODEL, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);

test('every room of model/ has a header: a README.md titled with its path and one paragraph of what it owns', () => {
  expect(rooms().length).toBeGreaterThan(1);
  const wrong: string[] = [];
  for (const room of rooms()) {
    const file = path.join(MODEL, room, 'README.md');
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : '';
    const [title, ...rest] = text.split(/\n\s*\n/);
    if (title !== `# model/${room}/`) wrong.push(`model/${room}/README.md: its first line is not "# model/${room}/"`);
    if (rest.length !== 1 || rest[0]!.trim().length < 80) wrong.push(`model/${room}/README.md: not one paragraph of what the room owns`);
  }
  expect(wrong).toEqual([]);
});

test('only the cross-cutting files stay at the top of model/: everything else is in a room', () => {
  const top = fs.readdirSync(MODEL).filter((f) => /\.[cm]?[jt]s$/.test(f));
  expect(top.filter((f) => !ALLOWED_TOP_LEVEL.includes(f))).toEqual([]);
});

test('every room holds code: no empty or header-only folder', () => {
  const empty = rooms().filter((room) => !fs.readdirSync(path.join(MODEL, room)).some((f) => f.endsWith('.ts')));
  expect(empty).toEqual([]);
});
