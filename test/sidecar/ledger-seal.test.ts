/**
 * A rescued ledger is sealed (an HMAC under the build's key, which the optimizer never holds): a property over
 * ledgers the sidecar writes (real reservations) and edits an attacker may make, each with the manifest's digest
 * updated as an editor would. Every edit is refused by name, the ones whose figures all agree with the build
 * included (the budget check alone lets those through); an unedited ledger is accepted.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import type { ServeConfig } from '../../model/serve-config';
import { Ledger, ledgerProblems, LedgerFile } from '../../sidecar/ledger';

type LedgerJson = ReturnType<typeof LedgerFile.parse>;
import { LEDGER_SEAL, ledgerSeal, sealLedgerIn } from '../../sidecar/ledger-seal';
import { checkSessionDir } from '../../sidecar/session-check';
import { tempDir } from '../helpers/fixtures';

const TASK = 'demo/task';
const DIGEST = 'a'.repeat(64);
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

/** What an attacker does to the ledger (the manifest's SHA-256 is updated after). */
type Edit =
  | { kind: 'drop reservations, raise what is left to match'; count: number }
  | { kind: 'shrink a reservation, raise what is left to match'; index: number }
  | { kind: 'rewrite a reservation’s commit'; index: number; commit: string }
  | { kind: 'reformat'; indent: number }
  | { kind: 'forge the seal without the key'; key: Uint8Array };
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
);

/** Applies `edit`, keeping every figure consistent with the build (so only the seal can tell); false: nothing to edit. */
function applyEdit(l: LedgerJson, edit: Edit): { ledger: LedgerJson; reformat?: number; forgeWith?: Buffer } | false {
  const next = structuredClone(l);
  const res = next.reservations;
  if (edit.kind === 'reformat') return { ledger: next, reformat: edit.indent };
  if (edit.kind === 'forge the seal without the key') return res.length ? { ledger: next, forgeWith: Buffer.from(edit.key) } : false;
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

/** A sealed session dir holding `ledger` (as `vero snapshot` writes it). */
function sealedSession(dir: string, ledgerText: string, key: Buffer): void {
  fs.writeFileSync(path.join(dir, 'ledger.json'), ledgerText);
  sealLedgerIn(dir, key, TASK);
  writeManifest(dir);
}

/** The manifest, every file's digest current (what an editor without the key can always do). */
function writeManifest(dir: string): void {
  const files = Object.fromEntries(
    ['ledger.json', LEDGER_SEAL].filter((f) => fs.existsSync(path.join(dir, f))).map((f) => [f, sha(fs.readFileSync(path.join(dir, f)))]),
  );
  const manifest = { tool: 'vero-harbor session', schema_version: 1, task_name: TASK, build_digest: DIGEST, taken_at: 'now', files };
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
  it('every edit of a sealed ledger is refused by name, even one whose figures all agree with the build', async () => {
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
            const want = { task_name: TASK, build_digest: DIGEST, base_commit: 'b'.repeat(40), budgets, seal_key: key };
            sealedSession(dir, text, key);
            expect(checkSessionDir(dir, want).problems).toEqual([]);
            const edited = applyEdit(LedgerFile.parse(JSON.parse(text)), edit);
            if (!edited) return;
            expect(ledgerProblems(edited.ledger, budgets)).toEqual([]); // consistent: the budget check passes it
            fs.writeFileSync(path.join(dir, 'ledger.json'), JSON.stringify(edited.ledger, null, edited.reformat));
            if (edited.forgeWith)
              fs.writeFileSync(
                path.join(dir, LEDGER_SEAL),
                `${ledgerSeal(edited.forgeWith, TASK, fs.readFileSync(path.join(dir, 'ledger.json')))}\n`,
              );
            writeManifest(dir);
            const { problems } = checkSessionDir(dir, want);
            expect(problems).toEqual([expect.stringMatching(/^ledger\.json: its seal does not match/)]);
            refusedConsistent += 1;
          } finally {
            fs.rmSync(dir, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 150 },
    );
    expect(refusedConsistent).toBeGreaterThan(30); // the property did test edits, not only empty ledgers
  });

  it('a ledger without its seal is refused by a build that seals; a build without a key checks none', async () => {
    const dir = tempDir('vero-seal-');
    const budgets: ServeConfig['budgets'] = [{ split: 'train', total_run_budget: 3 }];
    const want = { task_name: TASK, build_digest: DIGEST, base_commit: 'b'.repeat(40), budgets };
    fs.writeFileSync(path.join(dir, 'ledger.json'), await spentLedger(dir, budgets, [[0, 1]]));
    writeManifest(dir);
    expect(checkSessionDir(dir, { ...want, seal_key: randomBytes(32) }).problems).toEqual([
      expect.stringMatching(/^ledger\.json: not sealed \(no ledger\.seal\)/),
    ]);
    expect(checkSessionDir(dir, { ...want, seal_key: null }).problems).toEqual([]);
  });

  it('a seal made for another task is refused', async () => {
    const dir = tempDir('vero-seal-');
    const key = randomBytes(32);
    const budgets: ServeConfig['budgets'] = [{ split: 'train', total_run_budget: 3 }];
    sealedSession(dir, await spentLedger(dir, budgets, [[0, 1]]), key);
    const want = { task_name: 'other/task', build_digest: DIGEST, base_commit: 'b'.repeat(40), budgets, seal_key: key };
    expect(checkSessionDir(dir, want).problems.join('\n')).toMatch(/ledger\.json: its seal does not match/);
  });
});
