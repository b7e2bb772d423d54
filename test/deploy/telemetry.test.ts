/** Optional OpenTelemetry: with VERO_OTEL_ENDPOINT set, a worker exports workflow and activity spans over OTLP/HTTP. */
import { spawn } from 'node:child_process';
import * as http from 'node:http';
import * as path from 'node:path';
import { prepareEvalInput } from '../../client/eval-input';
import { startOrAttach } from '../../client/eval-start';
import { loadEvalConfig } from '../../infra/eval-config-file';
import { evalFixture, ROOT } from '../helpers/fixtures';
import { address, client, uniqueQueue } from '../helpers/temporal';
import { until } from '../helpers/process';

jest.setTimeout(120_000);

test('spans of the evaluation reach an OTLP/HTTP collector on loopback', async () => {
  const bodies: string[] = [];
  const collector = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces') bodies.push(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
  const port = (collector.address() as { port: number }).port;
  const q = uniqueQueue('otel');
  const f = evalFixture({ taskQueue: q, address: address(), tasks: { names: ['hello-world'] } });
  const worker = spawn(path.join(ROOT, 'bin', 'vero'), ['worker', '--address', address(), '--task-queue', q], {
    stdio: 'ignore',
    detached: true,
    env: { ...process.env, VERO_OTEL_ENDPOINT: `http://127.0.0.1:${port}` },
  });
  try {
    const input = await prepareEvalInput(loadEvalConfig(f.configFile), 'improved');
    const { handle } = await startOrAttach(await client(), input, q);
    await handle.result();
    const all = () => bodies.join('\n');
    await until(
      'the exported spans',
      async () => all().includes('StartActivity:runTask') && all().includes('StartChildWorkflow:evaluateChunk'),
      10_000,
    );
    // Workflow-side spans: the parent starting its chunk and the activities, the chunk scheduling each task.
    expect(all()).toContain('StartActivity:prepareCandidate');
    expect(all()).toContain('StartChildWorkflow:evaluateChunk');
    expect(all()).toContain('StartActivity:runTask');
    expect(all()).toContain('vero-harbor-worker');
  } finally {
    process.kill(-worker.pid!, 'SIGTERM');
    collector.close();
  }
});
