/**
 * A trusted evaluation that cannot score (infrastructure) runs again, up to its runs: `rescore_attempts` for
 * auto_best's re-score of the shortlist, a target's `max_attempts` for its scoring (vero's meaning of both).
 * Each run is a harbor run of its own, never the failed run's result again; after the last, finalize fails (503,
 * no reward file): a broken run never becomes a low reward. A real sidecar, the test Temporal server, the
 * Harbor stand-in.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cli, commitImprovement, harborStarts, setup, startSidecar } from '../helpers/sidecar';

jest.setTimeout(180_000);

/**
 * A Mode B task whose trusted evaluations get `runs` runs; the stand-in's attempt numbers count across all of
 * the sidecar's harbor runs (a state dir), so each run of a task takes the next outcome of its list.
 */
async function withRuns(runs: number, tasks: Record<string, unknown>) {
  const s = await setup(
    {
      scenario: { tasks, default: { reward: 1 } },
      build: {
        rescore_attempts: runs,
        targets: [{ split: 'test', reward_key: 'reward', max_attempts: runs }],
        // One attempt per task inside a run: what a second outcome sees is the second run.
        scoring: { trusted_task_attempts: 1 },
      },
    },
    { shareBuild: true },
  ); // the same build file: compiled once
  s.cfg.mode_b!.harbor.env = { ...s.cfg.mode_b!.harbor.env, HARBOR_STANDIN_STATE_DIR: path.join(s.dir, 'standin-state') };
  fs.writeFileSync(s.serveFile, JSON.stringify(s.cfg, null, 2));
  return s;
}

/** How many harbor runs each task had. */
const runsPerTask = (s: { dir: string }, names: string[]) =>
  Object.fromEntries(names.map((n) => [n, harborStarts(s).filter((i) => JSON.stringify(i.argv).includes(n)).length]));

test.concurrent(
  'the re-score and the target each fail their first run and score in their second: the reward is the candidate’s',
  async () => {
    const s = await withRuns(2, {
      // The agent's evaluation (1), the re-score's failed run (2), its second run (3).
      'sum-numbers': [{ reward: 1 }, { exception: 'RuntimeError' }, { reward: 1 }],
      'add-cli-flag': [{ exception: 'RuntimeError' }, { reward: 1 }],
    });
    const side = await startSidecar(s);
    try {
      const candidate = commitImprovement(s.work);
      expect((await cli(['eval', '--split', 'validation'], side.url)).code).toBe(0);
      const rewardFile = path.join(s.dir, 'verifier', 'reward.json');
      const details = path.join(s.dir, 'verifier', 'finalize.json');
      const fin = await cli(['finalize', '--token-file', s.cfg.paths.token_path, '--output', rewardFile, '--details', details], side.url);
      expect(fin.code).toBe(0);
      expect(JSON.parse(fs.readFileSync(rewardFile, 'utf8'))).toEqual({ reward: 1 });
      const record = JSON.parse(fs.readFileSync(details, 'utf8')) as { commit: string; shortlist: { commit: string; rescored: number }[] };
      expect(record.commit).toBe(candidate);
      expect(record.shortlist).toEqual([expect.objectContaining({ commit: candidate, rescored: 1 })]);
      expect(runsPerTask(s, ['sum-numbers', 'fix-csv-parser', 'add-cli-flag'])).toEqual({
        'sum-numbers': 3,
        'fix-csv-parser': 3, // re-run with its evaluation, though it had scored
        'add-cli-flag': 2,
      });
    } finally {
      await side.stop();
    }
  },
);

test.concurrent(
  'a target that cannot score in any of its runs fails finalize, saying so: no reward file, never the failure value',
  async () => {
    const s = await withRuns(2, { 'add-cli-flag': { exception: 'RuntimeError' } });
    const side = await startSidecar(s);
    try {
      commitImprovement(s.work);
      expect((await cli(['eval', '--split', 'validation'], side.url)).code).toBe(0);
      const rewardFile = path.join(s.dir, 'verifier', 'reward.json');
      const fin = await cli(['finalize', '--token-file', s.cfg.paths.token_path, '--output', rewardFile], side.url);
      expect(fin.code).toBe(1);
      expect(fin.stderr).toMatch(
        /eval sidecar replied 503: the trusted evaluation of [0-9a-f]{12} on "test" has 1 of 1 sample\(s\) unscored for infrastructure reasons \(first: add-cli-flag: .*\) \(after 2 runs\)/,
      );
      expect(fs.existsSync(rewardFile)).toBe(false);
      expect(runsPerTask(s, ['add-cli-flag'])).toEqual({ 'add-cli-flag': 2 });
    } finally {
      await side.stop();
    }
  },
);
