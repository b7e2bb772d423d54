/**
 * Replays committed workflow histories against today's workflow code: a change that would break running
 * evaluations (non-determinism) fails here. Re-record with `npm run record-histories` only when the change is
 * deliberate and no old evaluation is still running (or guard the change with patched()).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from '@temporalio/worker';
import { quietRuntime, workflowBundle } from '../helpers/temporal';

const dir = path.join(__dirname, '..', 'fixtures', 'histories');
const fixtures = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort();

test("history fixtures exist for every workflow type, today's and those recorded before each patched() change", () => {
  // Evaluations started before the `harbor-preflight` (v1) and `lane-grants` (v2) patches must still replay; an
  // evaluation that continues as new (`continue-as-new`, `rows-out-of-parent`) replays its first and last run;
  // one whose concurrency changed (setConcurrency updates, revokeLanes) replays with its chunk; one a spend
  // pool's cap stopped (`spend-cap`: taskSpent, spendCapReached, the grace timer's cancel) with its chunk and pool.
  // The continued and the capped evaluation recorded before `prestart-chunks` (v3: every chunk started with its
  // lanes) replay too; today's start the next chunk ahead of its lanes, and the capped one tells it to stop.
  // `spend-verdict`: lanes wait for the (pool's) verdict on their last spend before starting a task; `cancelled`:
  // a chunk cancelled with granted lanes ends once every lane's activity is cancelled; `paused` (`pause-resume`):
  // paused with its running task stopped, resumed, the task run again; `retried` (`retry-tasks`): the run of
  // `vero retry` whose finalize merges its rows into the evaluation's result file; `reset` (`reset-safe-chunks`): the
  // run of a pooled evaluation reset to its first workflow task, its chunks under fresh ids, the old ones cancelled;
  // `progress-reports` (`chunk-progress-reports`): the chunk sends the parent its counts as tasks finish;
  // `retried-running` (`retry-running`): a retry queued by an update while it ran, carried out by continuing as new;
  // `lane-teardown` (`lane-released-at-teardown`, `teardown-bound-twice-concurrency`): lanes start the next task
  // while the last one's harbor tears down, after its work-done signal (lane-teardown-fixture.test.ts checks it).
  // A race recorded before `race-hedged-capital` (`race-candidates.v1-…`) keeps deciding with PrPl-EB on replay;
  // one drawn by earlier evaluations (`race-weighted-order`) draws and decides the same on replay.
  expect(fixtures).toEqual([
    'build-task.json',
    'evaluate-candidate.cancelled.json',
    'evaluate-candidate.continued-first-run.json',
    'evaluate-candidate.continued-last-run.json',
    'evaluate-candidate.json',
    'evaluate-candidate.lane-teardown.json',
    'evaluate-candidate.paused.json',
    'evaluate-candidate.progress-reports.json',
    'evaluate-candidate.reset.json',
    'evaluate-candidate.retried-running.json',
    'evaluate-candidate.retried.json',
    'evaluate-candidate.set-concurrency.json',
    'evaluate-candidate.spend-cap.json',
    'evaluate-candidate.spend-verdict.json',
    'evaluate-candidate.v1-before-preflight.json',
    'evaluate-candidate.v2-before-lane-grants.json',
    'evaluate-candidate.v3-before-prestart.continued-first-run.json',
    'evaluate-candidate.v3-before-prestart.spend-cap.json',
    'evaluate-chunk.cancelled.json',
    'evaluate-chunk.json',
    'evaluate-chunk.lane-teardown.json',
    'evaluate-chunk.paused.json',
    'evaluate-chunk.progress-reports.json',
    'evaluate-chunk.reset.json',
    'evaluate-chunk.set-concurrency.json',
    'evaluate-chunk.spend-cap.json',
    'evaluate-chunk.spend-verdict.json',
    'evaluate-chunk.v1-before-preflight.json',
    'evaluate-chunk.v2-before-lane-grants.json',
    'evaluate-samples.json',
    'race-candidates.history-weighted.json',
    'race-candidates.json',
    'race-candidates.v1-before-hedged-capital.json',
    'race-entry.json',
    'spend-pool.json',
    'spend-pool.reset.json',
    'spend-pool.spend-verdict.json',
  ]);
});

test.each(fixtures)('%s replays without non-determinism', async (file) => {
  quietRuntime();
  const { workflowId, history } = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as { workflowId: string; history: unknown };
  await Worker.runReplayHistory({ workflowBundle: await workflowBundle(), replayName: file }, history, workflowId);
});
