/**
 * Records workflow history fixtures for the replay test: runs a small evaluation (one task retried after an
 * infrastructure error) on a throwaway dev server and saves the parent's and the chunk's histories.
 *
 *   npm run record-histories
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { connect, prepareEvalInput, startOrAttach } from '../../client/eval-client';
import { startDevServer } from '../../infra/dev-server';
import { loadEvalConfig } from '../../infra/eval-config-file';
import { findTemporalCli, PROJECT_ROOT } from '../../infra/temporal-cli';
import { createVeroWorker, installCliRuntimeLogger } from '../../worker/create-worker';

async function main(): Promise<void> {
  installCliRuntimeLogger();
  const out = path.join(PROJECT_ROOT, 'test', 'fixtures', 'histories');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vero-record-'));
  const repo = path.join(tmp, 'agent-repo');
  execFileSync(path.join(PROJECT_ROOT, 'examples', 'make-agent-repo.sh'), [repo], { stdio: 'ignore' });
  const temporal = findTemporalCli();
  const server = await startDevServer({ temporalCli: temporal });
  const taskQueue = 'record-fixtures';
  const { worker, connection } = await createVeroWorker({ address: server.address, namespace: 'default', taskQueue });
  try {
    await worker.runUntil(async () => {
      const cfg = loadEvalConfig(path.join(PROJECT_ROOT, 'examples', 'vero.yaml'), {
        agent_repo: repo,
        home: path.join(tmp, 'home'),
        'tasks.names': ['hello-world', 'sum-numbers'],
        'harbor.env': {
          HARBOR_STANDIN_TIME_SCALE: '0',
          HARBOR_STANDIN_STATE_DIR: path.join(tmp, 'state'),
          HARBOR_STANDIN_SCENARIO: JSON.stringify({
            tasks: { 'sum-numbers': [{ exception: 'RuntimeError' }, { reward: 1 }] },
            default: { reward: 1 },
          }),
        },
        'temporal.address': server.address,
        'temporal.task_queue': taskQueue,
      });
      const input = await prepareEvalInput(cfg, 'improved');
      const client = await connect(server.address, 'default');
      const { handle } = await startOrAttach(client, input, taskQueue);
      await handle.result();
      fs.mkdirSync(out, { recursive: true });
      for (const [name, id] of [
        ['evaluate-candidate', input.evalId],
        ['evaluate-chunk', `${input.evalId}/chunk-0`],
      ] as const) {
        // `temporal workflow show --output json` writes the history JSON that runReplayHistory reads.
        const json = execFileSync(temporal, ['workflow', 'show', '--address', server.address, '-w', id, '--output', 'json'], {
          encoding: 'utf8',
          maxBuffer: 64 << 20,
        });
        const history = JSON.parse(json) as { events: unknown[] };
        fs.writeFileSync(path.join(out, `${name}.json`), `${JSON.stringify({ workflowId: id, history }, null, 1)}\n`);
        process.stdout.write(`recorded ${name}.json (${history.events.length} events)\n`);
      }
    });
  } finally {
    await connection.close();
    await server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

void main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
