/**
 * A race end to end (real dev server, real worker, the Harbor stand-in): three candidates on 40 tasks in one
 * shared seeded order; the clearly worse one is eliminated early and runs far fewer tasks (harbor invocations
 * counted), the two close ones run every task; each candidate's rows are an evaluation of its own (partial
 * for the eliminated one), `vero compare`'s pairing uses the tasks both ran, and a second race reuses every
 * stored row instead of running it again.
 */
import * as fs from 'node:fs';
import { earlierScores, prepareRaceInput, raceResult, startRace } from '../../client/race-client';
import { loadEvalConfig } from '../../infra/eval-config-file';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import { comparePaired, taskScoresOf } from '../../model/race/paired-comparison';
import { raceOrder, type RaceResult } from '../../model/race/types';
import { taskWeights, weightedOrder } from '../../model/race/sampling';
import { conforming } from '../helpers/json-schema';
import { runVero } from '../helpers/process';
import { parse, stringify } from 'yaml';
import { evalFixture, invocations, tempDir } from '../helpers/fixtures';
import { raceDataset, raceRepo } from '../helpers/race-fixture';
import { address, client, uniqueQueue, withWorker } from '../helpers/temporal';

jest.setTimeout(240_000);

const N = 40;
const names = Array.from({ length: N }, (_, i) => `t${String(i).padStart(2, '0')}`);

/** The agents' skill profiles (the stand-in's agent profile): all, all but two, none. */
const PROFILES: [string, string[]][] = [
  ['strong', ['*']],
  ['close', ['t0[0-4]', 't0[6-9]', 't1[0-6]', 't1[8-9]', 't[2-3]*']],
  ['weak', []],
];

const runsOf = (log: string, evalId: string) =>
  invocations(log).filter((i) => i.event === 'start' && [i.cwd, i.job_dir ?? '', ...i.argv].join(' ').includes(`/runs/${evalId}/`)).length;

test('a clearly worse candidate is eliminated early; the close ones run every task; nothing is paid twice', async () => {
  const q = uniqueQueue('race');
  const f = evalFixture({ taskQueue: q, address: address(), execution: { concurrency: 3 } });
  const dir = tempDir('vero-race-');
  // The fixture's vero.yaml, with this test's agents and tasks (the CLI reads it too).
  const yaml = parse(fs.readFileSync(f.configFile, 'utf8')) as { agent_repo: string; tasks: { source: { path: string } } };
  yaml.agent_repo = raceRepo(dir, PROFILES);
  yaml.tasks.source.path = raceDataset(dir, 'race-bench', names);
  fs.writeFileSync(f.configFile, stringify(yaml));
  const cfg = loadEvalConfig(f.configFile);
  const options = { confidence: 0.95, margin: 0, seed: 'test', batchSize: 2, onEliminated: 'stop' as const };
  const input = await prepareRaceInput(cfg, ['strong', 'close', 'weak'], options);
  const c = await client();
  await withWorker(q, async () => {
    expect(await startRace(c, input, q)).toBe('started');
    const r = await raceResult(c, input.raceId);
    const [strong, close, weak] = r.candidates;
    // The order is the seeded shuffle, recorded in the result.
    expect(r.order).toEqual(raceOrder(names, 'test'));
    expect(r.order).not.toEqual(names);
    // The worse one is out early, against the leader, with the reason; the close ones are not separated.
    expect(weak!.status).toBe('eliminated');
    expect(weak!.eliminatedAt).toBeLessThanOrEqual(20);
    expect(weak!.why).toMatch(/entirely below 0/);
    expect(r.decisions.find((d) => d.eliminated.some((e) => e.candidateRef === 'weak'))!.leader).toBe('strong');
    expect(r.stopReason).toBe('tasks-exhausted');
    expect(r.winner).toBe('strong');
    expect(strong!.status).toBe('winner');
    expect(close!.status).toBe('finished');
    // Task counts: the close ones ran all 40 (harbor once each); weak at most one batch past its elimination.
    expect(runsOf(f.invocationLog, strong!.evalId)).toBe(N);
    expect(runsOf(f.invocationLog, close!.evalId)).toBe(N);
    const weakRuns = runsOf(f.invocationLog, weak!.evalId);
    expect(weakRuns).toBeLessThanOrEqual(weak!.eliminatedAt! + 2 * 2);
    expect(weakRuns).toBeGreaterThanOrEqual(weak!.eliminatedAt!);
    expect(r.spent.taskRuns).toBeLessThanOrEqual(2 * N + weakRuns);
    expect(r.fullEvaluation.taskRuns).toBe(3 * N);
    // Each candidate's rows are an evaluation of its own: the eliminated one partial, with the tasks it ran.
    const entry = async (id: string) => (await c.workflow.getHandle(id).result()) as CandidateResult;
    const [es, ec, ew] = [await entry(strong!.evalId), await entry(close!.evalId), await entry(weak!.evalId)];
    expect(es.status).toBe('completed');
    expect(es.score).toBe(1);
    expect(ec.score).toBeCloseTo(38 / 40);
    expect(ew.status).toBe('budget_exhausted');
    expect(ew.nRun).toBe(weak!.tasksRun);
    expect(ew.spend?.reached).toMatch(/^raced: eliminated after/);
    expect(ew.tasks!.filter((t) => t.status === 'not_run')).toHaveLength(N - ew.nRun!);
    // vero compare's pairing: strong and close share all 40 tasks; weak shares only those it ran.
    expect(comparePaired(taskScoresOf(es), taskScoresOf(ec)).n).toBe(N);
    expect(comparePaired(taskScoresOf(es), taskScoresOf(ew)).n).toBe(ew.nRun);

    // A second race of the same candidates (another seed): every row already scored is reused, not run.
    const before = invocations(f.invocationLog).filter((i) => i.event === 'start').length;
    const again = await prepareRaceInput(cfg, ['strong', 'close', 'weak'], { ...options, seed: 'other' });
    expect(again.raceId).not.toBe(input.raceId);
    expect(again.stored.map((s) => s.length)).toEqual([N, N, ew.nRun]);
    // Through the CLI this time: its --json conforms to the shipped schema.
    const out = await runVero(['race', 'strong', 'close', 'weak', '-c', f.configFile, '--seed', 'other', '--batch', '2', '--json']);
    const r2 = conforming<RaceResult>('race', out.stdout);
    expect(r2.raceId).toBe(again.raceId);
    expect(r2.candidates[0]!.reused).toBe(r2.candidates[0]!.tasksRun);
    const ranAgain = invocations(f.invocationLog).filter((i) => i.event === 'start').length - before;
    // Only weak's tasks it had not run before can have cost anything.
    expect(ranAgain).toBe(r2.spent.taskRuns);
    expect(ranAgain).toBeLessThanOrEqual(r2.candidates[2]!.tasksRun - 0);
    expect(runsOf(f.invocationLog, r2.candidates[0]!.evalId)).toBe(0);
    expect(runsOf(f.invocationLog, r2.candidates[1]!.evalId)).toBe(0);

    // A third race drawn by the earlier evaluations' disagreement (--history-weights): the weighted order from the
    // home's results under this config, recorded with each draw's probability; decisions about all 40 tasks.
    const { scores, commits } = earlierScores(cfg.home, again.configDigest, names);
    const weights = taskWeights(scores)!;
    const out3 = await runVero([
      'race',
      'strong',
      'close',
      'weak',
      '-c',
      f.configFile,
      '--seed',
      'w',
      '--batch',
      '2',
      '--history-weights',
      '--json',
    ]);
    const r3 = conforming<RaceResult>('race', out3.stdout);
    expect(commits).toBe(3);
    expect(r3.order).toEqual(weightedOrder(names, weights, 'w').order);
    expect(r3.order).not.toEqual(raceOrder(names, 'w'));
    expect(r3.sampling).toEqual({
      kind: 'history-weighted',
      earlierEvaluations: 3,
      relativeProbability: weightedOrder(names, weights, 'w').draws.map((d) => d.rel),
    });
    expect(r3.candidates[2]!.status).toBe('eliminated');
    expect(r3.winner).toBe('strong');
  });
});
