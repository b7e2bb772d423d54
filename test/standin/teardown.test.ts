/**
 * The stand-in's teardown (harbor-standin/README.md): after the verifier, the trial's reward is on disk and its
 * result.json is written only when the teardown ends, as Harbor's is after `docker compose down`; a fault
 * scripted there kills or hangs the harbor with the reward on disk and no result.json.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DATASET, STANDIN, tempDir } from '../helpers/fixtures';

const args = (jobs: string) => ['run', '-p', DATASET, '-i', 'hello-world', '-a', 'oracle', '-o', jobs, '--job-name', 'j', '-y', '-q'];
const theTrial = (job: string) =>
  fs
    .readdirSync(job, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => path.join(job, d.name))[0]!;

function harbor(jobs: string, scenario: unknown, env: Record<string, string> = {}) {
  return spawnSync(STANDIN, args(jobs), {
    env: { ...process.env, HARBOR_STANDIN_TIME_SCALE: '0', HARBOR_STANDIN_SCENARIO: JSON.stringify(scenario), ...env },
    encoding: 'utf8',
  });
}

test('a teardown ends the trial after its verifier: the phases end before finished_at, the log says so', () => {
  const jobs = tempDir();
  const r = harbor(jobs, { default: { reward: 1, duration_ms: 100 }, teardown_ms: 300, time_scale: 1 }, { HARBOR_STANDIN_TIME_SCALE: '1' });
  expect(r.status).toBe(0);
  const trial = theTrial(path.join(jobs, 'j'));
  const result = JSON.parse(fs.readFileSync(path.join(trial, 'result.json'), 'utf8')) as {
    verifier: { finished_at: string };
    finished_at: string;
  };
  expect(Date.parse(result.finished_at)).toBeGreaterThan(Date.parse(result.verifier.finished_at));
  expect(fs.readFileSync(path.join(trial, 'trial.log'), 'utf8')).toMatch(/running verifier[\s\S]*stopping environment[\s\S]*done/);
});

test('a crash scripted during the teardown leaves the reward on disk and no result.json', () => {
  const jobs = tempDir();
  const r = harbor(jobs, { default: { reward: 1, teardown_fault: 'crash' } });
  expect(r.signal).toBe('SIGKILL');
  const trial = theTrial(path.join(jobs, 'j'));
  expect(fs.readFileSync(path.join(trial, 'verifier', 'reward.txt'), 'utf8')).toBe('1\n');
  expect(fs.existsSync(path.join(trial, 'result.json'))).toBe(false);
});

test('a hang scripted during the teardown keeps the trial unfinished until harbor is stopped', async () => {
  const jobs = tempDir();
  const child = spawn(STANDIN, args(jobs), {
    env: { ...process.env, HARBOR_STANDIN_TIME_SCALE: '0', HARBOR_STANDIN_SCENARIO: '{"default":{"reward":1,"teardown_fault":"hang"}}' },
    stdio: 'ignore',
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const job = path.join(jobs, 'j');
  const rewarded = () => fs.existsSync(job) && fs.readdirSync(job).some((d) => fs.existsSync(path.join(job, d, 'verifier', 'reward.txt')));
  for (let i = 0; i < 200 && !rewarded(); i++) await new Promise((r) => setTimeout(r, 50));
  expect(rewarded()).toBe(true);
  expect(fs.existsSync(path.join(theTrial(job), 'result.json'))).toBe(false);
  child.kill('SIGTERM');
  expect(await exited).toBe(130);
});

test('HARBOR_STANDIN_TEARDOWN_MS takes milliseconds or "docker"; anything else is refused before any trial', () => {
  const jobs = tempDir();
  const r = harbor(jobs, { default: { reward: 1 } }, { HARBOR_STANDIN_TEARDOWN_MS: 'soon' });
  expect(r.status).not.toBe(0);
  expect(r.stderr).toContain('HARBOR_STANDIN_TEARDOWN_MS: expected milliseconds or "docker", got soon');
  expect(fs.existsSync(path.join(jobs, 'j'))).toBe(false);
  expect(harbor(tempDir(), { default: { reward: 1 } }, { HARBOR_STANDIN_TEARDOWN_MS: 'docker' }).status).toBe(0);
});
