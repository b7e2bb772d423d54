/**
 * auto_best_race: finalize races the shortlist on the selection split (a real sidecar, its own Temporal worker, the
 * stand-in harbor). The winner is the better candidate, its reward is its target score, the record carries each
 * entry's tasks and interval and the race's cost against scoring every task — and the loser stops costing trials
 * once eliminated.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RacedEntry, RaceSummary } from '../../sidecar/finalize-race';
import { invocations, taskOf } from '../helpers/fixtures';
import { cli, commitImprovement, finalizeAsVerifier, git, setup, startSidecar } from '../helpers/sidecar';

jest.setTimeout(240_000);

const VALIDATION = ['count-words', 'fix-csv-parser', 'hello-world', 'reverse-string', 'sum-numbers'];

test('the shortlist races on the selection split: the better candidate wins, the worse is eliminated and stops costing trials', async () => {
  const s = await setup({
    // The weak candidate's trials take 2 s, so the race decides on its first four before its fifth can finish.
    timeScale: '1',
    build: {
      partition: { train: ['hello-world'], validation: VALIDATION, test: ['add-cli-flag'] },
      budgets: [{ split: 'validation', total_run_budget: 3 }],
      // A low confidence so that five tasks can separate a candidate that solves everything from one that solves nothing.
      auto_best_race: { confidence: 0.6 },
      // One task per candidate between decisions (concurrency ÷ live candidates).
      max_concurrency: 2,
    },
  });
  const side = await startSidecar(s);
  try {
    fs.writeFileSync(path.join(s.work, 'harbor-standin-agent.json'), JSON.stringify({ solves: ['no-such-task'], duration_ms: 2000 }));
    git(s.work, 'add', '-A');
    git(s.work, 'commit', '-q', '-m', 'a slow candidate that solves nothing');
    const weak = git(s.work, 'rev-parse', 'HEAD');
    expect((await cli(['eval', '--split', 'validation'], side.url)).code).toBe(0);
    const strong = commitImprovement(s.work, ['*']);
    expect((await cli(['eval', '--split', 'validation'], side.url)).code).toBe(0);
    expect(git(s.work, 'rev-parse', 'HEAD')).toBe(strong);
    const log = path.join(s.dir, 'harbor.jsonl');
    const before = invocations(log).filter((i) => i.event === 'start').length;

    const fin = await finalizeAsVerifier(side, s);
    expect(fin.status).toBe(200);
    const json = fin.json as {
      commit: string;
      rewards: Record<string, number>;
      reason: string;
      shortlist: RacedEntry[];
      race: RaceSummary;
    };
    expect(json.commit).toBe(strong);
    expect(json.rewards).toEqual({ reward: 1 });
    expect(json.reason).toMatch(/^winner of a race of 2 shortlisted candidate\(s\) on "validation": /);
    const byCommit = new Map(json.shortlist.map((e) => [e.commit, e]));
    expect(byCommit.get(strong)).toMatchObject({ recorded: 1, rescored: 1 });
    expect(byCommit.get(weak)).toMatchObject({ recorded: 0, rescored: 0 });
    expect(byCommit.get(weak)!.eliminated_at).toBeLessThan(VALIDATION.length);
    expect(json.race.stop_reason).toBe('one-left');
    const [lo, hi] = json.race.winner_interval;
    expect(lo).toBeLessThanOrEqual(1);
    expect(hi).toBeGreaterThanOrEqual(1);
    expect(json.race.full_trial_runs).toBe(2 * VALIDATION.length);
    expect(json.race.trial_runs).toBeLessThan(json.race.full_trial_runs);

    expect(json.race.trial_runs).toBe(byCommit.get(strong)!.tasks_run + byCommit.get(weak)!.tasks_run);
    // The winner runs until the race stops (one left): at least every task the loser ran, at most all of them.
    expect(byCommit.get(strong)!.tasks_run).toBeGreaterThanOrEqual(byCommit.get(weak)!.tasks_run);
    expect(byCommit.get(strong)!.tasks_run).toBeLessThanOrEqual(VALIDATION.length);
    // What harbor ran after the agent's evaluations: the race (a task of the eliminated candidate's that had
    // started may be stopped: it counts no trial) and the target, once.
    const raced = invocations(log)
      .filter((i) => i.event === 'start')
      .slice(before)
      .map(taskOf);
    expect(raced.filter((t) => t === 'add-cli-flag')).toHaveLength(1);
    expect(raced.length - 1).toBeGreaterThanOrEqual(json.race.trial_runs);
    expect(raced.length - 1).toBeLessThanOrEqual(json.race.full_trial_runs);
    // finalize's record keeps the race for the verifier's log.
    const record = JSON.parse(fs.readFileSync(path.join(s.cfg.paths.admin_volume, 'finalize.json'), 'utf8')) as { race?: unknown };
    expect(record.race).toEqual(json.race);
  } finally {
    await side.stop();
  }
});
