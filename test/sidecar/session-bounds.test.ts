/**
 * A rescued session from outside: its ledger is checked against the build's budgets (an edited ledger whose
 * digest was updated too is refused, by the relaunch check and by the sidecar opening it), and its size is
 * bounded — a huge file, too many bytes in all, or a tar member declaring more than a session may hold are
 * refused by name before anything of them is read or written.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import * as tar from 'tar';
import { unpackSession } from '../../sidecar/resume-session';
import { ConfigError, LedgerCorruptError } from '../../model/errors';
import type { ServeConfig } from '../../model/compiled-task/serve-config';
import { Ledger } from '../../sidecar/ledger';
import { checkSessionDir, MAX_SESSION_BYTES, MAX_SESSION_FILE_BYTES } from '../../sidecar/session-check';
import { tempDir } from '../helpers/fixtures';

const BUDGETS: ServeConfig['budgets'] = [
  { split: 'train', total_run_budget: 5, total_sample_budget: 20, max_samples_per_run: 4 },
  { split: 'validation', total_run_budget: 2 },
];
const DIGEST = 'a'.repeat(64);
const want = { task_name: 'demo/task', build_digest: DIGEST, base_commit: 'b'.repeat(40), budgets: BUDGETS };
const sha = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** A ledger as the sidecar writes it after two train runs (3 and 4 samples) and one validation run. */
function spentLedger() {
  const at = new Date(0).toISOString();
  return {
    schema_version: 1,
    budgets: {
      train: { total_run_budget: 5, remaining_run_budget: 3, total_sample_budget: 20, remaining_sample_budget: 13, max_samples_per_run: 4 },
      validation: {
        total_run_budget: 2,
        remaining_run_budget: 1,
        total_sample_budget: null,
        remaining_sample_budget: null,
        max_samples_per_run: null,
      },
    },
    reservations: [
      { id: 1, split: 'train', n: 3, commit: 'c', at },
      { id: 2, split: 'train', n: 4, commit: 'c', at },
      { id: 3, split: 'validation', n: 1, commit: 'c', at },
    ],
  };
}
type LedgerJson = ReturnType<typeof spentLedger>;

/** A session dir holding `ledger`, its manifest recording the ledger's real digest (as an editor would). */
function sessionWith(ledger: unknown, extra: Record<string, number> = {}): string {
  const dir = tempDir('vero-session-');
  const text = JSON.stringify(ledger);
  fs.writeFileSync(path.join(dir, 'ledger.json'), text);
  const files: Record<string, string> = { 'ledger.json': sha(text) };
  // Sparse files: as large as they say, without the disk.
  for (const [rel, size] of Object.entries(extra)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), '');
    fs.truncateSync(path.join(dir, rel), size);
    files[rel] = '0'.repeat(64);
  }
  const manifest = {
    tool: 'vero-harbor session',
    schema_version: 1,
    task_name: want.task_name,
    build_digest: DIGEST,
    taken_at: 'now',
    files,
  };
  fs.writeFileSync(path.join(dir, 'session.json'), JSON.stringify(manifest));
  return dir;
}

const edits: [string, (l: LedgerJson) => void][] = [
  ['remaining runs raised', (l) => (l.budgets.train.remaining_run_budget = 5)],
  [
    'a total raised with what is left',
    (l) => ((l.budgets.train.total_sample_budget = 200), (l.budgets.train.remaining_sample_budget = 193)),
  ],
  ['a reservation removed', (l) => l.reservations.splice(0, 1)],
  ['a split dropped (no budget: unlimited?)', (l) => delete (l.budgets as Record<string, unknown>).validation],
  ['a per-run cap lifted', (l) => (l.budgets.train.max_samples_per_run = 100)],
];

describe('a rescued ledger is checked against the build', () => {
  it('accepts the ledger the sidecar wrote', () => {
    expect(checkSessionDir(sessionWith(spentLedger()), want).problems).toEqual([]);
    const file = path.join(tempDir('vero-ledger-'), 'ledger.json');
    fs.writeFileSync(file, JSON.stringify(spentLedger()));
    expect(Ledger.open(file, BUDGETS).remaining('train')).toMatchObject({ remaining_run_budget: 3 });
  });

  it.each(edits)('refuses a ledger edited (%s) with its digest updated: at the relaunch check and when the sidecar opens it', (_, edit) => {
    const ledger = spentLedger();
    edit(ledger);
    const { problems } = checkSessionDir(sessionWith(ledger), want);
    expect(problems.join('\n')).toMatch(/ledger\.json: does not match this build's budgets/);
    const file = path.join(tempDir('vero-ledger-'), 'ledger.json');
    fs.writeFileSync(file, JSON.stringify(ledger));
    expect(() => Ledger.open(file, BUDGETS)).toThrow(LedgerCorruptError);
    expect(() => Ledger.open(file, BUDGETS)).toThrow(/does not match this build's budgets/);
  });
});

describe('a rescued session is bounded in size', () => {
  it('names a file larger than a session file may be, without reading it', () => {
    const dir = sessionWith(spentLedger(), { 'candidates.bundle': 2.5 * 2 ** 30 });
    const { problems } = checkSessionDir(dir, want);
    expect(problems).toEqual([expect.stringMatching(/^candidates\.bundle: 2684354560 bytes, more than a session file may be/)]);
  });

  it('names a session whose files are too large in all', () => {
    const each = MAX_SESSION_FILE_BYTES - 1;
    const count = Math.ceil(MAX_SESSION_BYTES / each) + 1;
    const extra = Object.fromEntries(Array.from({ length: count }, (_, i) => [`disclosed/r/${i}.json`, each]));
    const { problems } = checkSessionDir(sessionWith(spentLedger(), extra), want);
    expect(problems.join('\n')).toMatch(/the session's files are more than \d+ bytes in all/);
  });

  it('stops unpacking a tar archive at a member declaring more than a session may hold (nothing of it written)', async () => {
    const dir = tempDir('vero-bomb-');
    const header = new tar.Header({ path: 'vero-session/big.json', mode: 0o644, size: 2.5 * 2 ** 30, type: 'File', mtime: new Date(0) });
    header.encode();
    const small = new tar.Header({ path: 'vero-session/session.json', mode: 0o644, size: 2, type: 'File', mtime: new Date(0) });
    small.encode();
    // A small file, then the bomb's header and a first MiB of zeros (gzipped: the archive stays tiny).
    const body = Buffer.concat([small.block!, Buffer.from('{}'), Buffer.alloc(510), header.block!, Buffer.alloc(1 << 20)]);
    const archive = path.join(dir, 'bomb.tgz');
    fs.writeFileSync(archive, zlib.gzipSync(body));
    const out = path.join(dir, 'out');
    fs.mkdirSync(out);
    const unpacked = unpackSession(archive, out);
    await expect(unpacked).rejects.toThrow(ConfigError);
    await expect(unpacked).rejects.toThrow(/vero-session\/big\.json: 2684354560 bytes, more than a session file may be/);
    expect(fs.existsSync(path.join(out, 'vero-session', 'big.json'))).toBe(false);
  });
});
