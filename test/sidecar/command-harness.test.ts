/**
 * Mode A's command harness (vero's command backend) in a real sidecar: vero's circle-packing example compiled
 * from its file unchanged, its harness scoring candidates' packing.py. The objective's metric (sum_radii) ranks,
 * its constraint (valid == 1) keeps a candidate that breaks it from being chosen or rewarded, the harness gets
 * vero's minimal environment, and a broken harness is an infrastructure failure, never a score.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildTaskDir } from '../../compiler/compile';
import { ServeConfig } from '../../model/compiled-task/serve-config';
import { tempDir } from '../helpers/fixtures';
import { uniqueQueue } from '../helpers/temporal';
import { cli, finalizeAsVerifier, git, modeAOnHost, onHost, post, startSidecar } from '../helpers/sidecar';
import { circleExample, GRID_PACKING, GRID_SUM_RADII, OVERLAPPING_PACKING, SEED_SUM_RADII } from '../helpers/circle-packing';

jest.setTimeout(180_000);

/** The example compiled and pointed at host paths, with `python` on the PATH the harness is handed (as in vero's image). */
async function circleSidecar(name: string) {
  const build = circleExample();
  const dir = path.dirname(path.dirname(build));
  const task = path.join(dir, 'task');
  await buildTaskDir(build, task, { skipSecretCheck: true, linkRuntime: true, params: { optimizer_model: 'gpt-5.4-mini' } });
  const work = path.join(dir, 'workspace-agent');
  fs.cpSync(path.join(task, 'environment', 'agent-seed'), work, { recursive: true });
  git(work, 'reset', '-q');
  const cfg = ServeConfig.parse(JSON.parse(fs.readFileSync(path.join(task, 'environment/sidecar/serve.json'), 'utf8')));
  const hostCfg: ServeConfig = { ...cfg, ...onHost(task, dir, work), mode_a: modeAOnHost(cfg.mode_a!, task), port: 0, host: '127.0.0.1' };
  delete hostCfg.gateway; // the harness gets no gateway token; the optimizer's scope is not under test here
  const serveFile = path.join(dir, 'serve.json');
  fs.writeFileSync(serveFile, JSON.stringify(hostCfg));
  const bin = tempDir('vero-python-');
  fs.symlinkSync(spawnPython(), path.join(bin, 'python'));
  const env = { PATH: `${bin}:${process.env.PATH}`, CIRCLE_SECRET: 'do-not-hand-over' };
  return { dir, serveFile, cfg: hostCfg, work, queue: uniqueQueue(name), env };
}

const spawnPython = () =>
  (process.env.PATH ?? '')
    .split(':')
    .map((d) => path.join(d, 'python3'))
    .find((p) => fs.existsSync(p)) ?? '/usr/bin/python3';

const commit = (work: string, program: string, message: string): string => {
  fs.writeFileSync(path.join(work, 'packing.py'), program);
  git(work, 'add', '-A');
  git(work, 'commit', '-qm', message);
  return git(work, 'rev-parse', 'HEAD');
};

test('vero’s circle packing: sum_radii ranks, a candidate breaking valid == 1 is never chosen, the reward is the harness’s sum_radii', async () => {
  const s = await circleSidecar('circle');
  const side = await startSidecar(s, s.env);
  try {
    const seed = await post(side.url, '/eval', { split: 'development' });
    expect(seed.status).toBe(200);
    expect(seed.json).toMatchObject({ mean_score: SEED_SUM_RADII, metrics: { sum_radii: SEED_SUM_RADII, valid: 1 } });
    expect(seed.json).not.toHaveProperty('violations');
    const better = commit(s.work, GRID_PACKING, 'a 5x5 grid');
    const b = await post(side.url, '/eval', { split: 'validation' });
    expect(b.json).toMatchObject({ commit: better, mean_score: GRID_SUM_RADII });
    const invalid = commit(s.work, OVERLAPPING_PACKING, 'overlapping circles');
    const i = await post(side.url, '/eval', { split: 'validation' });
    expect(i.json).toMatchObject({ commit: invalid, mean_score: 5.2, violations: ['valid == 1 (observed 0)'] });
    const fin = await finalizeAsVerifier(side, s);
    expect(fin.status).toBe(200);
    expect(fin.json).toMatchObject({
      commit: better,
      rewards: { sum_radii: GRID_SUM_RADII },
      objective: { metric: 'sum_radii', direction: 'maximize', constraints: ['valid == 1'] },
    });
    expect(fin.json).not.toHaveProperty('violations');
    // vero finalize (the recorded result, again) says what it ranked by and which candidate broke what.
    const again = await cli(['finalize', '--token-file', s.cfg.paths.token_path, '--output', path.join(s.dir, 'reward.json')], side.url);
    expect(again.stderr).toContain('finalize: ranked by sum_radii (maximize, highest first); constraints: valid == 1\n');
    expect(again.stderr).toContain(`finalize: ${invalid.slice(0, 12)} not eligible: broke on validation: valid == 1 (observed 0)\n`);
  } finally {
    await side.stop();
  }
});

test('a submitted candidate that breaks valid == 1 on the target is rewarded the failure value, and the record says which', async () => {
  const s = await circleSidecar('circle-submit');
  fs.writeFileSync(s.serveFile, JSON.stringify({ ...s.cfg, reward_mode: 'submit', submit_enabled: true }));
  const side = await startSidecar(s, s.env);
  try {
    const invalid = commit(s.work, OVERLAPPING_PACKING, 'overlapping circles');
    fs.writeFileSync(path.join(s.cfg.paths.admin_volume, 'submission.json'), JSON.stringify({ commit: invalid }));
    // The sidecar has the commit once the agent evaluated it.
    expect((await post(side.url, '/eval', { split: 'development' })).status).toBe(200);
    const fin = await finalizeAsVerifier(side, s);
    expect(fin.json).toMatchObject({ commit: invalid, rewards: { sum_radii: 0 }, violations: { sum_radii: ['valid == 1 (observed 0)'] } });
    const again = await cli(['finalize', '--token-file', s.cfg.paths.token_path, '--output', path.join(s.dir, 'reward.json')], side.url);
    expect(again.stderr).toContain(
      'finalize: target sum_radii: the graded candidate broke valid == 1 (observed 0) (its reward is the failure value)\n',
    );
  } finally {
    await side.stop();
  }
});

test('the harness: vero’s minimal environment; a candidate that raises is its failure; a harness that crashes is never a score', async () => {
  const s = await circleSidecar('circle-broken');
  const side = await startSidecar(s, s.env);
  try {
    commit(s.work, GRID_PACKING, 'a 5x5 grid');
    expect((await post(side.url, '/eval', { split: 'validation' })).json).toMatchObject({ mean_score: GRID_SUM_RADII });
    // The candidate's code runs in the harness: it sees PATH and HOME (passed through), never the sidecar's secrets.
    commit(s.work, 'import os\ndef run_packing():\n    raise RuntimeError("ENV " + " ".join(sorted(os.environ)))\n', 'leaks env');
    const failed = await post(side.url, '/eval', { split: 'development' });
    expect(failed.json).toMatchObject({ status: 'completed_with_errors', mean_score: 0, n_errors: 1 });
    const sample = JSON.parse(fs.readFileSync(path.join(String(failed.json.result_path), '0.json'), 'utf8')) as { error: string };
    expect(sample.error).toMatch(/^the candidate failed: the harness reported failed \(candidate_execution_failed: RuntimeError: ENV /);
    expect(sample.error).toContain('PATH');
    expect(sample.error).not.toContain('CIRCLE_SECRET');
    // A harness that exits non-zero (here: it cannot load, the candidate is not at fault) is an infrastructure failure.
    fs.writeFileSync(path.join((s.cfg.mode_a as { harness: { dir: string } }).harness.dir, 'evaluate.py'), 'raise SystemExit(3)\n');
    commit(s.work, fs.readFileSync(path.join(s.dir, 'task/environment/agent-seed/packing.py'), 'utf8'), 'the seed again');
    const crashed = await post(side.url, '/eval', { split: 'validation' });
    expect(crashed.status).toBeGreaterThanOrEqual(500);
    expect(side.log()).toContain('the harness failed (exit 3)'); // the optimizer is told only that it failed
    const fin = await finalizeAsVerifier(side, s);
    // The grid's trusted re-score meets the broken harness: finalize fails (no reward), never a low score.
    expect(fin.status).toBe(503);
    expect(JSON.stringify(fin.json)).toContain('Workflow execution failed');
  } finally {
    await side.stop();
  }
});

test('vero’s disclose_budget: false: the budget is enforced but never shown (status, evaluation replies)', async () => {
  const s = await circleSidecar('circle-undisclosed');
  const budgets = [{ split: 'validation', total_run_budget: 1 }];
  fs.writeFileSync(s.serveFile, JSON.stringify({ ...s.cfg, budgets, disclose_budget: false }));
  const side = await startSidecar(s, s.env);
  try {
    const status = (await (await fetch(`${side.url}/status`)).json()) as {
      splits: { split: string; budget: unknown; agent_evaluable: boolean }[];
    };
    expect(status.splits.find((x) => x.split === 'validation')).toMatchObject({ budget: null, agent_evaluable: true });
    commit(s.work, GRID_PACKING, 'a 5x5 grid');
    const first = await post(side.url, '/eval', { split: 'validation' });
    expect(first.json).toMatchObject({ mean_score: GRID_SUM_RADII, budget_remaining: null });
    const second = await post(side.url, '/eval', { split: 'validation' });
    expect(second).toEqual({ status: 429, json: { error: 'run budget of split "validation" is exhausted' } });
  } finally {
    await side.stop();
  }
});
