/**
 * A rescued session is sealed (an HMAC under the build's key, which the optimizer never holds, over the task and
 * every file's digest): a property over ledgers the sidecar writes (real reservations), its evaluation jobs and
 * candidates, and edits an attacker may make to any of them, each with the manifest's digests recomputed as an
 * editor would. Every edit is refused by name: a ledger whose figures all agree with the build (the budget check
 * alone lets those through), a job turned back to running with any admission (resumed, not charged again), an
 * injected candidate, an added job; an unedited session is accepted.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import type { ServeConfig } from '../../model/compiled-task/serve-config';
import { Ledger, ledgerProblems, LedgerFile } from '../../sidecar/ledger';

type LedgerJson = ReturnType<typeof LedgerFile.parse>;
import { sealSessionIn } from '../../sidecar/ledger-seal';
import { checkSessionDir } from '../../sidecar/session-check';
import { tempDir } from '../helpers/fixtures';

const TASK = 'demo/task';
const DIGEST = 'a'.repeat(64);
const BASE = 'b'.repeat(40);
const JOB = 'eval-jobs/job-0000001.json';
const sha = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** A build's budgets: one to three splits, each with or without each limit. */
const budgetsArb: fc.Arbitrary<ServeConfig['budgets']> = fc
  .uniqueArray(fc.constantFrom('train', 'validation', 'test'), { minLength: 1, maxLength: 3 })
  .chain((splits) =>
    fc.tuple(
      ...splits.map((split) =>
        fc.record(
          {
            split: fc.constant(split),
            total_run_budget: fc.integer({ min: 1, max: 6 }),
            total_sample_budget: fc.integer({ min: 1, max: 30 }),
            max_samples_per_run: fc.integer({ min: 1, max: 5 }),
          },
          { requiredKeys: ['split'] },
        ),
      ),
    ),
  );

const admittedArb = fc.record({
  commit: fc.stringMatching(/^[0-9a-f]{40}$/),
  split: fc.constantFrom('train', 'validation', 'test'),
  ids: fc.array(fc.nat({ max: 50 }), { minLength: 1, maxLength: 10 }),
});

/** What an attacker does to the session (the manifest's SHA-256s are recomputed after). */
type LedgerEdit =
  | { kind: 'drop reservations, raise what is left to match'; count: number }
  | { kind: 'shrink a reservation, raise what is left to match'; index: number }
  | { kind: 'rewrite a reservation’s commit'; index: number; commit: string }
  | { kind: 'reformat'; indent: number };
type Edit =
  | LedgerEdit
  | { kind: 'forge the seal without the key'; key: Uint8Array }
  | { kind: 'set a finished job running again'; admitted: { commit: string; split: string; ids: number[] } }
  | { kind: 'add a running job'; admitted: { commit: string; split: string; ids: number[] } }
  | { kind: 'inject a candidate'; mean: number };
const editArb: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant('drop reservations, raise what is left to match' as const), count: fc.integer({ min: 1, max: 20 }) }),
  fc.record({ kind: fc.constant('shrink a reservation, raise what is left to match' as const), index: fc.nat() }),
  fc.record({
    kind: fc.constant('rewrite a reservation’s commit' as const),
    index: fc.nat(),
    commit: fc.stringMatching(/^[0-9a-f]{1,40}$/),
  }),
  fc.record({ kind: fc.constant('reformat' as const), indent: fc.integer({ min: 1, max: 4 }) }),
  fc.record({ kind: fc.constant('forge the seal without the key' as const), key: fc.uint8Array({ minLength: 32, maxLength: 32 }) }),
  fc.record({ kind: fc.constant('set a finished job running again' as const), admitted: admittedArb }),
  fc.record({ kind: fc.constant('add a running job' as const), admitted: admittedArb }),
  fc.record({ kind: fc.constant('inject a candidate' as const), mean: fc.double({ min: 0, max: 1, noNaN: true }) }),
);

/** A job record as the sidecar writes it (`status` and `admitted` as given). */
const jobOf = (id: string, status: string, a: { commit: string; split: string; ids: number[] }) => ({
  job_id: id,
  status,
  split: a.split,
  commit: a.commit,
  n_samples: a.ids.length,
  started_at: '2026-01-01T00:00:00.000Z',
  ...(status === 'running' ? {} : { finished_at: '2026-01-01T00:01:00.000Z', result: { mean_score: 0.5 } }),
  admitted: { request_id: id, ...a, full: false, access: 'viewable', budget_remaining: null },
});

/** A candidate record as the registry writes it (the base commit: graded without the bundle). */
const candidateOf = (seq: number, mean: number) => ({
  commit: BASE,
  split: 'train',
  n_samples: 2,
  full_split: false,
  mean_score: mean,
  n_errors: 0,
  admin: false,
  seq,
  evaluated_at: '2026-01-01T00:00:00.000Z',
});

/** A ledger edit keeping every figure consistent with the build (so only the seal can tell); false: nothing to edit. */
function editLedger(l: LedgerJson, edit: LedgerEdit): { ledger: LedgerJson; reformat?: number } | false {
  const next = structuredClone(l);
  const res = next.reservations;
  if (edit.kind === 'reformat') return { ledger: next, reformat: edit.indent };
  if (!res.length) return false;
  const r = res[edit.kind === 'drop reservations, raise what is left to match' ? 0 : edit.index % res.length]!;
  if (edit.kind === 'rewrite a reservation’s commit') {
    if (r.commit === edit.commit) return false;
    r.commit = edit.commit;
    return { ledger: next };
  }
  const refund = (split: string, runs: number, samples: number) => {
    const b = next.budgets[split]!;
    if (b.remaining_run_budget !== null) b.remaining_run_budget += runs;
    if (b.remaining_sample_budget !== null) b.remaining_sample_budget += samples;
  };
  if (edit.kind === 'shrink a reservation, raise what is left to match') {
    if (r.n < 2) return false;
    refund(r.split, 0, r.n - 1);
    r.n = 1;
    return { ledger: next };
  }
  for (const gone of res.splice(0, Math.min(edit.count, res.length))) refund(gone.split, 1, gone.n);
  return { ledger: next };
}

/** Applies `edit` to the session in `dir` (its files still valid for their readers); false: nothing to edit. */
function applyEdit(dir: string, edit: Edit, budgets: ServeConfig['budgets']): boolean {
  const write = (rel: string, value: unknown, indent?: number) =>
    fs.writeFileSync(path.join(dir, rel), JSON.stringify(value, null, indent));
  if (edit.kind === 'forge the seal without the key') {
    sealSessionIn(dir, Buffer.from(edit.key), TASK, filesOf(dir));
    return true;
  }
  if (edit.kind === 'set a finished job running again') write(JOB, jobOf('job-0000001', 'running', edit.admitted));
  else if (edit.kind === 'add a running job') write('eval-jobs/job-0000002.json', jobOf('job-0000002', 'running', edit.admitted));
  else if (edit.kind === 'inject a candidate')
    write('candidates.json', { schema_version: 1, records: [candidateOf(1, 0.25), candidateOf(2, edit.mean)] });
  else {
    const edited = editLedger(LedgerFile.parse(JSON.parse(fs.readFileSync(path.join(dir, 'ledger.json'), 'utf8'))), edit);
    if (!edited) return false;
    expect(ledgerProblems(edited.ledger, budgets)).toEqual([]); // consistent: the budget check passes it
    write('ledger.json', edited.ledger, edited.reformat);
  }
  return true;
}

/** Every file of the session in `dir` but its manifest, with its digest. */
function filesOf(dir: string): Record<string, string> {
  const rels = fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((f) => f.split(path.sep).join('/'));
  return Object.fromEntries(
    rels
      .filter((f) => f !== 'session.json' && fs.statSync(path.join(dir, f)).isFile())
      .map((f) => [f, sha(fs.readFileSync(path.join(dir, f)))]),
  );
}

/** A sealed session dir holding `ledger`, one finished job and one candidate (as `vero snapshot` writes it). */
function sealedSession(dir: string, ledgerText: string, key: Buffer): void {
  fs.writeFileSync(path.join(dir, 'ledger.json'), ledgerText);
  fs.mkdirSync(path.join(dir, 'eval-jobs'), { recursive: true });
  fs.writeFileSync(path.join(dir, JOB), JSON.stringify(jobOf('job-0000001', 'complete', { commit: BASE, split: 'train', ids: [0, 1] })));
  fs.writeFileSync(path.join(dir, 'candidates.json'), JSON.stringify({ schema_version: 1, records: [candidateOf(1, 0.25)] }));
  sealSessionIn(dir, key, TASK, filesOf(dir));
  writeManifest(dir);
}

/** The manifest, every file's digest current (what an editor without the key can always do). */
function writeManifest(dir: string): void {
  const manifest = {
    tool: 'vero-harbor session',
    schema_version: 1,
    task_name: TASK,
    build_digest: DIGEST,
    taken_at: 'now',
    files: filesOf(dir),
  };
  fs.writeFileSync(path.join(dir, 'session.json'), JSON.stringify(manifest));
}

/** A ledger the sidecar wrote: real reservations of `runs` (split index, sample count), as many as the budget takes. */
async function spentLedger(dir: string, budgets: ServeConfig['budgets'], runs: [number, number][]): Promise<string> {
  const file = path.join(dir, 'ledger.json');
  const ledger = Ledger.open(file, budgets);
  for (const [i, n] of runs) await ledger.reserve(budgets[i % budgets.length]!.split, n, 'c0ffee').catch(() => undefined);
  const text = fs.readFileSync(file, 'utf8');
  fs.rmSync(file);
  return text;
}

describe("a rescued session's ledger is sealed", () => {
  it('every edit of a sealed session is refused by name: ledger (its figures agreeing with the build), jobs, candidates', async () => {
    const key = randomBytes(32);
    let refusedConsistent = 0;
    await fc.assert(
      fc.asyncProperty(
        budgetsArb,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 5 })), { maxLength: 12 }),
        editArb,
        async (budgets, runs, edit) => {
          const dir = tempDir('vero-seal-');
          try {
            const text = await spentLedger(dir, budgets, runs);
            const want = { task_name: TASK, build_digest: DIGEST, base_commit: BASE, budgets, seal_key: key };
            sealedSession(dir, text, key);
            expect(checkSessionDir(dir, want).problems).toEqual([]);
            if (!applyEdit(dir, edit, budgets)) return;
            writeManifest(dir);
            const { problems } = checkSessionDir(dir, want);
            expect(problems).toEqual([expect.stringMatching(/^ledger\.seal: the session's seal does not match/)]);
            refusedConsistent += 1;
          } finally {
            fs.rmSync(dir, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 150 },
    );
    expect(refusedConsistent).toBeGreaterThan(60); // the property did test edits, not only empty ledgers
  });

  it('a session without its seal is refused by a build that seals; a build without a key checks none', async () => {
    const dir = tempDir('vero-seal-');
    const budgets: ServeConfig['budgets'] = [{ split: 'train', total_run_budget: 3 }];
    const want = { task_name: TASK, build_digest: DIGEST, base_commit: BASE, budgets };
    fs.writeFileSync(path.join(dir, 'ledger.json'), await spentLedger(dir, budgets, [[0, 1]]));
    writeManifest(dir);
    expect(checkSessionDir(dir, { ...want, seal_key: randomBytes(32) }).problems).toEqual([
      expect.stringMatching(/^ledger\.seal: the session is not sealed/),
    ]);
    expect(checkSessionDir(dir, { ...want, seal_key: null }).problems).toEqual([]);
  });

  it('a seal made for another task is refused', async () => {
    const dir = tempDir('vero-seal-');
    const key = randomBytes(32);
    const budgets: ServeConfig['budgets'] = [{ split: 'train', total_run_budget: 3 }];
    sealedSession(dir, await spentLedger(dir, budgets, [[0, 1]]), key);
    const want = { task_name: 'other/task', build_digest: DIGEST, base_commit: BASE, budgets, seal_key: key };
    expect(checkSessionDir(dir, want).problems.join('\n')).toMatch(/ledger\.seal: the session's seal does not match/);
  });
});
