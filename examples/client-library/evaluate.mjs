// Evaluates one candidate with vero-harbor as a library, and asks SQL about it: what `vero start-eval --wait`
// and `vero query` do, from your own code. Needs a Temporal server and a worker (`vero dev`).
//
//   node examples/client-library/evaluate.mjs examples/vero.yaml improved
import {
  awaitResult,
  connect,
  getProgress,
  loadEvalConfig,
  prepareEvalInput,
  queryEvaluations,
  startOrAttach,
  withTasks,
} from 'vero-harbor';

const [configFile = 'vero.yaml', candidate = 'HEAD'] = process.argv.slice(2);
const cfg = loadEvalConfig(configFile); // throws ConfigError with every problem of the file
const client = await connect(cfg.temporal.address, cfg.temporal.namespace);
try {
  const input = await prepareEvalInput(cfg, candidate); // resolves the commit, the tasks and the evaluation id
  const { mode } = await startOrAttach(client, input, cfg.temporal.task_queue);
  console.log(`${mode} ${input.evalId}: ${input.tasks.length} task(s) of ${input.candidate.slice(0, 12)}`);

  const done = awaitResult(client, input.evalId);
  let finished = false;
  done.finally(() => (finished = true)).catch(() => undefined);
  while (!finished) {
    const p = await getProgress(client, input.evalId).catch(() => null); // null until a worker picks it up
    if (p) console.log(`progress: ${p.done}/${p.total} done, ${p.running} running, ${p.errors} error(s)`);
    await Promise.race([done.catch(() => undefined), new Promise((r) => setTimeout(r, 1000))]);
  }
  const result = withTasks(await done); // the rows come from the result file beyond 1,000 tasks
  for (const t of result.tasks ?? []) console.log(`task ${t.task}: ${t.status} ${t.score ?? '-'}`);
  console.log(`score ${result.score.toFixed(3)} (${result.nScored} scored, ${result.nErrors} error(s))`);

  const q = await queryEvaluations(
    `SELECT status, count(*) AS n FROM tasks WHERE eval_id = '${input.evalId}' GROUP BY status ORDER BY status`,
    { client, home: cfg.home },
  );
  console.log(`query: ${JSON.stringify(q.rows)}`);
} finally {
  await client.connection.close();
}
