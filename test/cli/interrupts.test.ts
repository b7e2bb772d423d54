/**
 * Ctrl-C as a person presses it, on real processes: `vero demo` stops (no hang) and a second Ctrl-C leaves no
 * Temporal server behind; `vero dev` stops when interrupted during start-up; Ctrl-C on `start-eval --wait`
 * gives the terminal its line wrapping back before printing its whole hint.
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { processAlive } from '../../infra/process-group';
import { evalFixture, tempDir } from '../helpers/fixtures';
import { spawnWorker, until, VERO } from '../helpers/process';
import { address, cancelAndSettle, uniqueQueue } from '../helpers/temporal';

jest.setTimeout(240_000);

const started: ChildProcess[] = [];
const servers: number[] = [];
afterEach(() => {
  for (const p of started.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  for (const pid of servers.splice(0))
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* stopped, as it should be */
    }
});

function run(args: string[]): { proc: ChildProcess; out: () => string; exit: Promise<number | null> } {
  const proc = spawn(VERO, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, VERO_LOG_LEVEL: 'WARN' } });
  started.push(proc);
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return { proc, out: () => out, exit: new Promise((r) => proc.on('exit', (code) => r(code))) };
}

/** The pid of the Temporal dev server a command started on this SQLite file (its pid file), once it is spawned. */
async function serverPid(db: string): Promise<number> {
  const pid = await until('the dev server spawned', async () => {
    const f = `${db}.pid`;
    return fs.existsSync(f) ? (JSON.parse(fs.readFileSync(f, 'utf8')) as { pid: number }).pid : undefined;
  });
  servers.push(pid);
  return pid;
}

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise((r) => probe.close(r));
  return port;
}

async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: still running after ${ms} ms`)), ms)),
  );
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

test('vero demo: Ctrl-C while it evaluates stops it and its server', async () => {
  const home = tempDir('vero-demo-int-');
  const demo = run(['demo', '--home', home]);
  const pid = await serverPid(path.join(home, 'temporal.db'));
  await until('evaluating', async () => /started eval-/.test(demo.out()), 120_000);
  demo.proc.kill('SIGINT');
  expect(await within(demo.exit, 60_000, 'vero demo after Ctrl-C')).toBe(130);
  expect(processAlive(pid)).toBe(false);
  // Activities cancelled by the stop are not reported with their stacks.
  const after = demo.out().slice(demo.out().indexOf('stopping…'));
  expect(after).not.toMatch(/^\s+at /m);
  expect(after).not.toMatch(/\[WARN\]/);
});

test('vero demo: a second Ctrl-C kills at once and orphans no Temporal server', async () => {
  const home = tempDir('vero-demo-int2-');
  const demo = run(['demo', '--home', home]);
  const pid = await serverPid(path.join(home, 'temporal.db'));
  await until('evaluating', async () => /started eval-/.test(demo.out()), 120_000);
  demo.proc.kill('SIGINT');
  await until('stopping', async () => demo.out().includes('stopping…'));
  demo.proc.kill('SIGINT');
  expect(await within(demo.exit, 20_000, 'vero demo after a second Ctrl-C')).toBe(130);
  await until('the server gone', async () => !processAlive(pid), 10_000);
});

test('vero dev: Ctrl-C during start-up is not swallowed', async () => {
  const db = path.join(tempDir('vero-dev-int-'), 'temporal.db');
  const [port, uiPort] = [await freePort(), await freePort()];
  const dev = run(['dev', '--db', db, '--port', String(port), '--ui-port', String(uiPort)]);
  const pid = await serverPid(db); // spawned, not yet serving: start-up
  dev.proc.kill('SIGINT');
  expect(await within(dev.exit, 30_000, 'vero dev after a Ctrl-C in start-up')).toBe(0);
  await until('the server gone', async () => !processAlive(pid), 15_000);
  expect(dev.out()).not.toContain('worker polling');
  // What the SDK says about the server being stopped (connections "retried N times") is not shown.
  expect(dev.out()).not.toMatch(/\[WARN\]|retried \d+ times/);
});

test('Ctrl-C on start-eval --wait in a terminal: line wrapping back, then the whole hint', async () => {
  const q = uniqueQueue('wait-int');
  const f = evalFixture({ taskQueue: q, address: address(), scenario: { default: { reward: 1, duration_ms: 60_000 } } });
  const w = spawnWorker(address(), q, {});
  let evalId: string | null = null;
  try {
    // util-linux's `script` gives the command a terminal; ETX on it is the terminal's Ctrl-C (SIGINT to vero).
    const cmd = [VERO, 'start-eval', '-c', f.configFile, '--candidate', 'improved', '--wait'].map((a) => `'${a}'`).join(' ');
    const term = spawn('script', ['-qfec', cmd, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, COLUMNS: '60' } });
    started.push(term);
    let out = '';
    term.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exit = new Promise<number | null>((r) => term.on('exit', (code) => r(code)));
    // At 60 columns the bar is the short one (cli/progress-bar.ts): its counts are what shows it is drawn.
    await until('the progress bar', async () => / \d+\/6 \| run /.test(out), 120_000);
    evalId = /(?:started|attached) (eval-\S+)/.exec(out)?.[1] ?? null;
    term.stdin.write('\x03');
    expect(await within(exit, 30_000, 'start-eval --wait after Ctrl-C')).toBe(130);
    const esc = String.fromCharCode(27);
    const wrapOff = out.lastIndexOf(`${esc}[?7l`);
    const wrapOn = out.lastIndexOf(`${esc}[?7h`);
    expect(wrapOff).toBeGreaterThanOrEqual(0); // the bar turned wrapping off…
    expect(wrapOn).toBeGreaterThan(wrapOff); // …and it is back on
    const hint = out.slice(wrapOn).replace(/\r/g, '');
    expect(hint).toContain(
      `stopped waiting; the evaluation goes on. Follow it: vero status ${evalId} · vero results ${evalId} · stop it: vero cancel ${evalId}`,
    );
  } finally {
    if (evalId) await cancelAndSettle(evalId);
    w.kill('SIGTERM');
  }
});

// `script` is util-linux's; without it the terminal test cannot run at all (it fails, loudly).
test('util-linux script is here', () => expect(spawnSync('script', ['--version']).status).toBe(0));
