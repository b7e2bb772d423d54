/** Running the CLI and waiting for conditions, without blocking the event loop (in-process workers keep polling). */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { processAlive } from '../../infra/process-group';
import { ROOT, tempDir } from './fixtures';

export const VERO = path.join(ROOT, 'bin', 'vero');

export function runVero(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runCommand(VERO, args, env);
}

/** Runs a command to its end (the event loop keeps turning meanwhile, so several can run at once). */
export function runCommand(
  command: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (code) => resolve({ code, stdout, stderr })); // 'close': after the output is read, not just the exit
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns (or resolves to) something truthy; errors count as "not yet". */
export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 90_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const v = await Promise.resolve()
      .then(fn)
      .catch(() => undefined);
    if (v) return v;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Whether a process exists (infra/process-group's processAlive). */
export const pidAlive = processAlive;

export interface WorkerProcess {
  proc: ChildProcess;
  /** The worker's combined stdout/stderr. */
  log: string;
  /** Signals the worker's whole process group (harbor runs in groups of their own and survives a SIGKILL). */
  kill(signal: NodeJS.Signals): void;
  /** The tail of the worker's log (for a failing test's message). */
  tail(chars?: number): string;
}

/** Starts `vero worker` as a separate process group, its output in a log file. */
export function spawnWorker(addr: string, taskQueue: string, env: Record<string, string> = {}, args: string[] = []): WorkerProcess {
  const log = path.join(tempDir('vero-worker-log-'), 'worker.log');
  const fd = fs.openSync(log, 'a');
  const proc = spawn(VERO, ['worker', '--address', addr, '--task-queue', taskQueue, ...args], {
    detached: true,
    stdio: ['ignore', fd, fd],
    env: { ...process.env, VERO_LOG_LEVEL: 'INFO', ...env },
  });
  fs.closeSync(fd);
  return {
    proc,
    log,
    kill(signal) {
      try {
        process.kill(-proc.pid!, signal);
      } catch {
        /* already gone */
      }
    },
    tail: (chars = 3000) => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').slice(-chars) : `${log}: gone`),
  };
}
