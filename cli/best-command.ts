/** `vero best`: the best completed evaluation of a config, and whether it is told apart from the runner-up. */
import { rankedByLine } from './ranking-lines';
import { Command } from 'commander';
import { CandidateResult, EVALUATION_RANKING, rankResults } from '../model/evaluation/candidate-result';
import { countedTaskScores } from '../model/evaluation/task-result';
import { scoreUncertainty } from '../model/race/uncertainty';
import { beatsRunnerUp } from '../model/race/paired-comparison';
import { ExitCode } from '../model/errors';
import { pickBest, withTasks } from '../client/eval-results';
import { listEvaluations } from '../client/eval-listing';
import { fmtScore, resultSummary } from './format';
import { ConnectionFlags, connectionSettings, connectTo, withConnection } from './options';
import { print, printJson } from './print';
import { digestScope } from './config-scope';

export function registerBestCommand(program: Command): void {
  withConnection(
    program
      .command('best')
      .description('the best completed evaluation (score, then fewer errors, then earlier) among those of the config (-c), or --all')
      .option('--all', 'compare every evaluation, whatever its config')
      .option('--json', 'machine-readable output'),
  ).action(async (o: ConnectionFlags & { json?: boolean; all?: boolean }) => {
    const client = await connectTo(connectionSettings(o), o.json);
    const done = (await listEvaluations(client, { configDigest: digestScope(o) })).filter((r) => r.workflowStatus === 'COMPLETED');
    const results = await Promise.all(done.map(async (r) => (await client.workflow.getHandle(r.evalId).result()) as CandidateResult));
    const best = pickBest(results);
    if (!best) {
      process.stderr.write('no completed evaluation\n');
      process.exitCode = ExitCode.evaluationFailed;
      return;
    }
    // Is the winner told apart from the runner-up? The paired rule of `vero compare` (model/race/paired-comparison.ts).
    const second = rankResults(results)[1];
    const u = (r: CandidateResult) => r.uncertainty ?? scoreUncertainty(countedTaskScores(withTasks(r).tasks ?? []));
    const runnerUp = second
      ? {
          evalId: second.evalId,
          candidateRef: second.candidateRef,
          score: second.score,
          separable: beatsRunnerUp(withTasks(best), withTasks(second)),
        }
      : null;
    if (o.json) return printJson({ ...best, tasks: undefined, uncertainty: u(best), runnerUp, rankedBy: EVALUATION_RANKING });
    print(resultSummary({ ...best, uncertainty: u(best) }));
    print(`ranking   ${rankedByLine(EVALUATION_RANKING)}`);
    if (runnerUp && !runnerUp.separable)
      print(
        `note      not separable from the runner-up ${runnerUp.candidateRef} (${fmtScore(runnerUp.score)}) at 95% by vero compare's paired rule (docs/client.md); evaluate on more tasks to tell them apart`,
      );
  });
}
