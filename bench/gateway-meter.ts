/**
 * The inference gateway's meter under an optimizer that labels every call with a new task: what a request costs
 * through the gateway against the same request sent straight to the upstream (the anchor), once the meter holds
 * many task labels, how large the meter's files grow, and how fast `/health` answers meanwhile.
 *
 *   node dist/bench/gateway-meter.js [--labels 12000] [--requests 2000] [--concurrency 8]
 *
 * The upstream is a minimal local HTTP server answering chat completions with usage (no model); the gateway is the
 * sidecar's own (sidecar/gateway), with its meter on disk in a temp dir.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { readEnvFile } from '../infra/env-file';
import { GatewaySpec } from '../model/gateway/policy';
import { Gateway } from '../sidecar/gateway/gateway';
import { median, numberArg } from './fixtures';

const BODY = JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
const ANSWER = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 0,
  model: 'gpt-test',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 11, completion_tokens: 5, total_tokens: 16 },
});

function startUpstream(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWER));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
        close: () => new Promise((r) => server.close(() => r())),
      }),
    ),
  );
}

/** `n` POSTs, `concurrency` at a time; `url(i)` names each one's URL. Returns the wall time in seconds. */
async function drive(n: number, concurrency: number, url: (i: number) => string, token: string): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  const lane = async () => {
    for (let i = next++; i < n; i = next++) {
      const r = await fetch(url(i), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: BODY,
      });
      await r.text();
      if (r.status !== 200) throw new Error(`request ${i}: ${r.status}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return (performance.now() - t0) / 1000;
}

/** `/health` answered while `during` runs: each answer's latency in ms. */
async function healthLatencies(base: string, during: Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  let done = false;
  void during.finally(() => (done = true));
  while (!done) {
    const t0 = performance.now();
    await (await fetch(`${base}/health`)).text();
    out.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 20));
  }
  return out;
}

const dirBytes = (dir: string): number =>
  fs.readdirSync(dir, { withFileTypes: true }).reduce((a, e) => a + (e.isFile() ? fs.statSync(path.join(dir, e.name)).size : 0), 0);

async function main(): Promise<void> {
  const labels = numberArg('--labels', 12_000);
  const requests = numberArg('--requests', 2_000);
  const concurrency = numberArg('--concurrency', 8);
  const upstream = await startUpstream();
  const admin = fs.mkdtempSync(path.join(os.tmpdir(), 'vero-bench-gw-'));
  const spec = GatewaySpec.parse({
    port: 1,
    upstreams: { openai: { base_url: upstream.url, key_env: 'BENCH_UPSTREAM_KEY' } },
    scopes: { evaluation: { models: ['gpt-test'], max_concurrency: concurrency } },
  });
  const gw = await Gateway.start(spec, admin, { BENCH_UPSTREAM_KEY: 'sk-bench' }, () => undefined, { host: '127.0.0.1', port: 0 });
  try {
    const env = readEnvFile(gw.envFileFor('bench-evaluation', 'evaluation'));
    const token = env.OPENAI_API_KEY!;
    const base = `http://127.0.0.1:${gw.port}`;
    const chat = (task: string) => `${base}/task/${encodeURIComponent(task)}/v1/chat/completions`;

    const direct: number[] = [];
    const through: number[] = [];
    // Rounds alternate the anchor and the gateway; the first fills the meter with `labels` task labels.
    const fill = await drive(labels, concurrency, (i) => chat(`label-${i}`), token);
    for (let round = 0; round < 3; round++) {
      direct.push(await drive(requests, concurrency, () => `${upstream.url}/v1/chat/completions`, 'sk-bench'));
      const run = drive(requests, concurrency, (i) => chat(`label-${labels + round * requests + i}`), token);
      const health = healthLatencies(base, run);
      through.push(await run);
      const h = await health;
      if (round === 2) {
        const sorted = [...h].sort((a, b) => a - b);
        console.log(
          `/health during the last round: median ${median(h).toFixed(1)} ms, max ${sorted[sorted.length - 1]!.toFixed(1)} ms (${h.length} probes)`,
        );
      }
    }
    const usage = gw.usageOf('bench-evaluation');
    const tasks = Object.keys(gw.taskUsageOf('bench-evaluation')).length;
    console.log(`filled ${labels} labels in ${fill.toFixed(1)} s (${Math.round(labels / fill)} requests/s)`);
    console.log(
      `meter: ${usage.requests} requests metered, ${tasks} task labels kept, ${(dirBytes(path.dirname(gw.paths.meter)) / 1024).toFixed(0)} KiB in gateway/`,
    );
    console.log('');
    console.log(`| round | straight to the upstream | through the gateway | ratio |`);
    console.log(`| ----- | ------------------------ | ------------------- | ----- |`);
    direct.forEach((d, i) =>
      console.log(`| ${i + 1} | ${d.toFixed(2)} s | ${through[i]!.toFixed(2)} s | ${(through[i]! / d).toFixed(2)} |`),
    );
    console.log(
      `median ratio: ${median(through.map((t, i) => t / direct[i]!)).toFixed(2)} (${requests} requests, ${concurrency} at a time)`,
    );
  } finally {
    await gw.close();
    await upstream.close();
    fs.rmSync(admin, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
