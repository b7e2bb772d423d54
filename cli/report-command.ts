/** `vero report`: a self-contained HTML page comparing the completed evaluations of a config (cli/report.ts). */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import { Command } from 'commander';
import type { CandidateResult } from '../model/evaluation/candidate-result';
import { ConfigError } from '../model/errors';
import { withTasks } from '../client/eval-results';
import { listEvaluations } from '../client/eval-listing';
import { uiLink } from '../client/connection';
import { writeFileDurable } from '../infra/atomic-file';
import { ConnectionFlags, connectionSettings, connectTo, withConnection } from './options';
import { print } from './print';
import { digestScope } from './config-scope';

async function completedResults(client: Client, configDigest: string | undefined): Promise<CandidateResult[]> {
  const done = (await listEvaluations(client, { configDigest })).filter((r) => r.workflowStatus === 'COMPLETED');
  return Promise.all(done.map(async (r) => withTasks((await client.workflow.getHandle(r.evalId).result()) as CandidateResult)));
}

export function registerReportCommand(program: Command): void {
  withConnection(
    program
      .command('report')
      .description(
        'a self-contained HTML page comparing candidates: score chart, the best against the runner-up (paired per-task deltas and interval, as vero compare), per-task matrix, errors, Web UI links',
      )
      .option('-o, --output <file>', 'where to write the page', 'report.html')
      .option('--all', 'every completed evaluation, whatever its config (default with -c: that config only)')
      .option('--title <title>', 'page title'),
  ).action(async (o: ConnectionFlags & { output: string; all?: boolean; title?: string }) => {
    const dir = path.dirname(path.resolve(o.output));
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory())
      throw new ConfigError(`-o: ${o.output}: the directory ${dir} does not exist (create it first)`);
    const conn = connectionSettings(o);
    const client = await connectTo(conn);
    const results = await completedResults(client, digestScope(o));
    if (results.length === 0) throw new ConfigError('no completed evaluation to report (check -c / --all and the Temporal address)');
    const { renderReport } = require('./report') as typeof import('./report');
    writeFileDurable(
      o.output,
      renderReport(results, {
        title: o.title,
        uiLink: (id) => uiLink(conn.uiUrl, conn.namespace, id),
        generatedAt: new Date().toISOString(),
      }),
    );
    print(`wrote ${o.output} (${results.length} candidate(s))`);
  });
}
