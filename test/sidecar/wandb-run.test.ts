/**
 * The sidecar's W&B run (sidecar/wandb-reporter.ts, sidecar/wandb_logger.py): an offline run of a real sidecar
 * (the test Temporal server, the Harbor stand-in) is read back with W&B's own reader of the pinned client, and
 * holds every row the sidecar logged (each evaluation's score, case counts and outcome per partition and
 * principal, the budgets left), the run's project/group/name/tags/notes, the traces as artifacts and finalize's
 * summary. An online run without WANDB_API_KEY is refused at build time, by name.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildTaskDir } from '../../compiler/compile';
import {
  WANDB_ARTIFACT,
  WANDB_DIR,
  WANDB_END_WAIT_SEC,
  WANDB_PYTHON_ENV,
  WANDB_REQUIREMENT,
  WANDB_VERSION,
} from '../../model/compiled-task/wandb-spec';
import { readRun, wandbPython } from '../helpers/wandb';
import { parse as parseToml } from 'smol-toml';
import { parse as parseYaml } from 'yaml';
import { endOfflineRun, wandbPaths } from '../../sidecar/wandb-reporter';
import { checkSessionDir } from '../../sidecar/session-check';
import { readSealKey } from '../../sidecar/ledger-seal';
import { commitImprovement, finalizeAsVerifier, post, setup, startSidecar, VERO } from '../helpers/sidecar';

jest.setTimeout(120_000);

/** The Harbor artifacts the built task (`<dir>/task`) declares. */
const taskArtifacts = (dir: string) =>
  (parseToml(fs.readFileSync(path.join(dir, 'task', 'task.toml'), 'utf8')) as { artifacts: Record<string, string>[] }).artifacts;

/** The rows the sidecar handed its logger (events.jsonl), in order, and the finish event's summary. */
function loggedEvents(adminVolume: string) {
  const events = fs
    .readFileSync(wandbPaths(adminVolume).events, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; row?: Record<string, unknown>; summary?: Record<string, unknown>; name?: string });
  return {
    rows: events.filter((e) => e.type === 'log').map((e) => e.row!),
    artifacts: events.filter((e) => e.type === 'artifact').map((e) => e.name!),
    summary: events.find((e) => e.type === 'finish')?.summary,
  };
}

async function untilFinished(stateFile: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (fs.existsSync(stateFile) && (JSON.parse(fs.readFileSync(stateFile, 'utf8')) as { finished?: boolean }).finished) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the W&B logger did not finish the run (${stateFile})`);
}

test('an offline run, read back with W&B’s own reader, holds every value the sidecar logged', async () => {
  const python = wandbPython();
  const wandb = {
    project: 'vero-tests',
    group: 'circles',
    name: 'cell-1',
    tags: ['t1', 't2'],
    notes: 'a note',
    mode: 'offline',
    log_traces: true,
  };
  const s = await setup({ build: { wandb } });
  expect(s.cfg.wandb).toEqual({ ...wandb });
  // The run's dir is on the sidecar's admin volume: a trial rescues it (with the session) or it goes with the sidecar.
  expect(taskArtifacts(s.dir)).toEqual([
    { source: '/state/admin/session', destination: 'vero-session', service: 'eval-sidecar' },
    { source: `/state/admin/${WANDB_DIR}`, destination: WANDB_ARTIFACT, service: 'eval-sidecar' },
  ]);
  const side = await startSidecar(s, { [WANDB_PYTHON_ENV]: python, WANDB_SILENT: 'true' });
  let train: Record<string, unknown>;
  let fin: Record<string, unknown>;
  try {
    commitImprovement(s.work);
    train = (await post(side.url, '/eval', { split: 'train' })).json;
    expect(train.mean_score).toBe(1);
    fin = (await finalizeAsVerifier(side, s)).json;
    expect(fin.rewards).toEqual({ reward: 1 });
    await untilFinished(wandbPaths(s.cfg.paths.admin_volume).state);
  } finally {
    await side.stop();
  }
  const logged = loggedEvents(s.cfg.paths.admin_volume);
  const run = readRun(python, wandbPaths(s.cfg.paths.admin_volume).dir);

  // The run as the file set it (the name carries a digest of the run id: two sessions of one name stay apart).
  expect(run.run).toMatchObject({ project: 'vero-tests', group: 'circles', tags: ['t1', 't2'], notes: 'a note' });
  expect(run.run.name).toMatch(/^cell-1--[0-9a-f]{6}$/);
  expect(run.run.config).toMatchObject({ 'vero/task': 'test/opt', 'vero/run_label': 'cell-1' });

  // Every row the sidecar logged is a history row at its step, value for value.
  const user = (row: Record<string, unknown>) => Object.fromEntries(Object.entries(row).filter(([k]) => !k.startsWith('_')));
  expect(run.history.map(user)).toEqual(logged.rows);
  // ... and they say what happened: the optimizer's train evaluation, the trusted ones, the budgets left.
  expect(logged.rows[0]).toMatchObject({
    partition: 'train',
    principal: 'agent',
    status: 'success',
    'train/agent/score': train.mean_score,
    'train/agent/num_cases': train.n_samples,
    'train/agent/cases/success': 3,
    'train/agent/cases/error': 0,
    'train/agent/feasible': true,
    'train/agent/evaluations/success_total': 1,
    'train/agent/metric/score': 1,
    'budget/train/remaining_runs': 4,
    'budget/validation/remaining_runs': 3,
  });
  expect(logged.rows.some((r) => r['test/trusted/score'] === 1 && r['test/trusted/num_cases'] === 1)).toBe(true);

  // Finalize's summary, and the run ended.
  expect(logged.summary).toMatchObject({ shipped: true, commit: fin.commit, 'reward/reward': 1, 'objective/metric': 'score' });
  expect(run.summary).toMatchObject(logged.summary!);
  expect(run.exit_code).toBe(0);
  // log_traces: each evaluation's trace as an artifact of its own.
  expect(run.artifacts.map((a) => a.name)).toEqual(logged.artifacts);
  expect(run.artifacts.length).toBe(logged.rows.filter((r) => r.evaluation_id).length);
  for (const a of run.artifacts) expect(a).toMatchObject({ type: 'evaluation_trace', files: [`${a.name.slice('trace-'.length)}.json`] });
});

test('the task’s collect step (vero snapshot) ends an offline run: the dir a trial rescues before its verifier holds the optimizer’s rows; finalize still rewards', async () => {
  const python = wandbPython();
  const s = await setup({ build: { wandb: { project: 'vero-tests', mode: 'offline' } } });
  const side = await startSidecar(s, { [WANDB_PYTHON_ENV]: python, WANDB_SILENT: 'true' });
  const dir = wandbPaths(s.cfg.paths.admin_volume).dir;
  try {
    commitImprovement(s.work);
    const train = (await post(side.url, '/eval', { split: 'train' })).json;
    expect(await endOfflineRun(s.cfg)).toBe(`the offline W&B run ended: ${dir}`);
    // No link W&B left beside the run (they point into this sidecar's file system): the dir reads the same anywhere.
    const links = fs
      .readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((f) => fs.lstatSync(path.join(dir, f)).isSymbolicLink());
    expect(links).toEqual([]);
    const run = readRun(python, dir);
    expect(run.history.filter((r) => r.evaluation_id !== undefined).map((r) => [r.partition, r['train/agent/score']])).toEqual([
      ['train', train.mean_score],
    ]);
    expect(run.summary).toMatchObject({ 'vero/ended_at': 'collect' });
    expect(run.exit_code).toBe(0);
    expect(await endOfflineRun(s.cfg)).toBe('the offline W&B run had ended');
    expect((await finalizeAsVerifier(side, s)).json.rewards).toEqual({ reward: 1 });
  } finally {
    await side.stop();
  }
});

/** The links under `dir`, relative to it. */
const linksIn = (dir: string) =>
  fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => fs.lstatSync(path.join(dir, f)).isSymbolicLink());

test('ending the offline run cannot fail the collect step: vero snapshot exits 0 with a session a relaunch accepts; the run’s dir keeps no links however it ends', async () => {
  const s = await setup({ build: { wandb: { project: 'vero-tests', mode: 'offline' } } });
  // The W&B wait is bounded well inside the collect step's timeout, which the snapshot shares.
  const collect = (
    parseToml(fs.readFileSync(path.join(s.dir, 'task', 'task.toml'), 'utf8')) as { verifier: { collect: { timeout_sec: number }[] } }
  ).verifier.collect[0]!;
  expect(collect.timeout_sec).toBeGreaterThanOrEqual(4 * WANDB_END_WAIT_SEC);
  const side = await startSidecar(s, { [WANDB_PYTHON_ENV]: 'false' }); // a logger that never writes the run
  try {
    commitImprovement(s.work);
    expect((await post(side.url, '/eval', { split: 'train' })).json.mean_score).toBe(1);
  } finally {
    await side.stop();
  }
  const p = wandbPaths(s.cfg.paths.admin_volume);
  // Ending the run throws (its events file cannot be appended to); W&B left links beside the run.
  fs.rmSync(p.events, { force: true });
  fs.mkdirSync(p.events);
  fs.symlinkSync('/no/such/sidecar/run', path.join(p.dir, 'latest-run'));
  fs.mkdirSync(path.join(p.dir, 'logs'));
  fs.symlinkSync('/no/such/sidecar/debug.log', path.join(p.dir, 'logs', 'debug.log'));
  const out = path.join(s.dir, 'rescued', 'vero-session');
  const r = spawnSync(VERO, ['snapshot', '--config', s.serveFile, '--out', out], { encoding: 'utf8' });
  expect(r.stderr).toMatch(/^could not end the offline W&B run \(.*EISDIR.*\); the session snapshot is complete\n$/);
  expect(r.status).toBe(0);
  const check = checkSessionDir(out, {
    task_name: s.cfg.task_name,
    build_digest: fs.readFileSync(s.cfg.paths.build_digest!, 'utf8').trim(),
    base_commit: s.cfg.base_commit,
    budgets: s.cfg.budgets,
    seal_key: readSealKey(s.cfg.paths.ledger_seal_key),
  });
  expect(check.problems).toEqual([]);
  expect(Object.keys(check.manifest!.files)).toEqual(expect.arrayContaining(['ledger.json', 'candidates.json', 'candidates.bundle']));
  expect(linksIn(p.dir)).toEqual([]);
  // A run that had ended (the sidecar's finalize) is rescued without its links too.
  fs.writeFileSync(p.state, JSON.stringify({ finished: true }));
  fs.symlinkSync('/no/such/sidecar/run', path.join(p.dir, 'latest-run'));
  expect(await endOfflineRun(s.cfg)).toBe('the offline W&B run had ended');
  expect(linksIn(p.dir)).toEqual([]);
});

test('an online run needs WANDB_API_KEY in the build host’s environment: refused at build time by name; the key reaches the sidecar only', async () => {
  const s = await setup({ build: { wandb: { project: 'vero-tests' } } }); // built with the secret check skipped
  expect(s.cfg.wandb).toMatchObject({ project: 'vero-tests', mode: 'online' });
  expect(taskArtifacts(s.dir).map((a) => a.destination)).toEqual(['vero-session']); // an online run is W&B's to keep
  const before = process.env.WANDB_API_KEY;
  delete process.env.WANDB_API_KEY;
  try {
    await expect(buildTaskDir(path.join(s.dir, 'build.yaml'), path.join(s.dir, 'again'))).rejects.toThrow(
      /secrets missing from the host environment: WANDB_API_KEY/,
    );
  } finally {
    if (before !== undefined) process.env.WANDB_API_KEY = before;
  }
  expect(fs.existsSync(path.join(s.dir, 'again'))).toBe(false);
  const compose = parseYaml(fs.readFileSync(path.join(s.dir, 'task', 'environment', 'docker-compose.yaml'), 'utf8')) as {
    services: Record<string, { environment: Record<string, string> }>;
  };
  expect(compose.services['eval-sidecar']!.environment.WANDB_API_KEY).toMatch(/^\$\{WANDB_API_KEY:\?/);
  expect(compose.services.main!.environment.WANDB_API_KEY).toBe('');
  const dockerfile = fs.readFileSync(path.join(s.dir, 'task', 'environment', 'sidecar', 'Dockerfile'), 'utf8');
  expect(dockerfile).toContain(`harbor==0.26.0 ${WANDB_REQUIREMENT}`);
  expect(
    fs
      .readdirSync(path.join(s.dir, 'task', 'environment', 'sidecar', 'harbor-wheelhouse'))
      .some((f) => f.startsWith(`wandb-${WANDB_VERSION}-`)),
  ).toBe(true);
});
