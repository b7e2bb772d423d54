#!/usr/bin/env node
// `npm run test:tiers`: the test files split between two jest processes run side by side. The first holds the
// real-Harbor tier (test/real-harbor/, the only tests that make Docker objects) in ONE jest worker: its files run
// one after another, so their checks that nothing is left behind see only their own. The second holds every other
// file in REST_WORKERS jest workers: those tests spend most of their time waiting (on Temporal timers, child
// processes, the stand-in's sleeps), so on two cores three files at once finish sooner than two. Both are built
// from the same path patterns (jest's positional patterns for the first, --testPathIgnorePatterns for the second),
// and before starting, the script checks with `jest --listTests` that every test/**/*.test.ts file is in exactly
// one tier (`--check` only checks; test/unit/test-tiers.test.ts runs it).
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const JEST = require.resolve('jest/bin/jest');

/** Path patterns (regular expressions over a file's absolute path, as jest reads them) of the first tier. */
const FIRST_TIER = ['/test/real-harbor/'];
/** Jest workers of the second tier (files of one worker run one after another). */
const REST_WORKERS = 2;

const TIERS = [
  { name: 'real-harbor', args: [...FIRST_TIER], workers: 1 },
  { name: 'rest', args: ['--testPathIgnorePatterns', ...FIRST_TIER], workers: REST_WORKERS },
];

function listTests(args) {
  const r = spawnSync(process.execPath, [JEST, '--listTests', ...args], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`jest --listTests ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout
    .split('\n')
    .filter((l) => l.trim())
    .map((f) => path.relative(ROOT, f).split(path.sep).join('/'));
}

function allTestFiles() {
  return fs
    .readdirSync(path.join(ROOT, 'test'), { recursive: true, encoding: 'utf8' })
    .map((f) => `test/${f.split(path.sep).join('/')}`)
    .filter((f) => f.endsWith('.test.ts'));
}

/** What is wrong with the split (empty when every test file is in exactly one tier), and each tier's files. */
function checkTiers() {
  const listed = TIERS.map((t) => ({ name: t.name, workers: t.workers, files: listTests(t.args) }));
  const problems = [];
  for (const f of allTestFiles().sort()) {
    const inTiers = listed.filter((t) => t.files.includes(f)).map((t) => t.name);
    if (inTiers.length !== 1) problems.push(`${f} is in ${inTiers.length ? inTiers.join(' and ') : 'no tier'}`);
  }
  for (const t of listed) if (!t.files.length) problems.push(`tier ${t.name} has no test files`);
  return { problems, tiers: listed };
}

function main() {
  const { problems, tiers } = checkTiers();
  if (problems.length) {
    process.stderr.write(`test tiers: every test file must run exactly once:\n  ${problems.join('\n  ')}\n`);
    process.exit(1);
  }
  if (process.argv.includes('--check')) {
    process.stdout.write(`${JSON.stringify(tiers)}\n`);
    return;
  }
  const { concurrently } = require('concurrently');
  const quote = (a) => (/^[\w/.:=-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);
  const { result } = concurrently(
    TIERS.map((t) => ({ name: t.name, command: [process.execPath, JEST, `--maxWorkers=${t.workers}`, ...t.args].map(quote).join(' ') })),
    { prefix: '[{name}]', cwd: ROOT },
  );
  result.then(
    () => process.exit(0),
    () => process.exit(1),
  );
}

if (require.main === module) main();
module.exports = { TIERS, checkTiers };
