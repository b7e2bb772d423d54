/**
 * Children a `vero` command runs in the foreground, on the user's terminal: the provisioning scripts
 * (scripts/ensure-*, examples/make-agent-repo.sh: their progress on stderr) and `vero run`'s harbor (Ctrl-C
 * reaches it as it reaches any foreground job; started by harbor/launch.ts only). What vero supervises goes
 * through infra/process-group.ts.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { PROJECT_ROOT } from './package-root';

/** Runs a script to completion, its stderr on the terminal; its stdout, trimmed. Throws when it fails. */
function scriptOutput(file: string, args: string[]): string {
  return execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

/** scripts/ensure-temporal: the Temporal CLI (TEMPORAL_CLI_PATH, PATH, or the pinned install, made on first use). */
export const ensureTemporal = (): string => scriptOutput(path.join(PROJECT_ROOT, 'scripts', 'ensure-temporal'), []);

/** scripts/ensure-harbor: the pinned Harbor's command (provisioned and cached on first use). */
export const ensureHarbor = (version: string): string => scriptOutput(path.join(PROJECT_ROOT, 'scripts', 'ensure-harbor'), [version]);

/** Where ensureHarbor's command came from, in words (its order: $HARBOR_BIN, a harbor on PATH, its cached venv). */
export const ensuredHarborFrom = (version: string): string =>
  `scripts/ensure-harbor ${version}: $HARBOR_BIN, a harbor ${version} on PATH, or its cached venv`;

/**
 * scripts/ensure-harbor-wheelhouse: Harbor `harborVersion`, with `packages` resolved together with it, as wheels for
 * this Python on this machine's architecture (cached).
 */
export const ensureHarborWheelhouse = (python: string, harborVersion: string, packages: string[] = []): string =>
  scriptOutput(path.join(PROJECT_ROOT, 'scripts', 'ensure-harbor-wheelhouse'), [harborVersion, python, os.machine(), ...packages]);

/** examples/make-agent-repo.sh (of `examplesDir`, default the package's): the example agent repo at `dest`. */
export function makeAgentRepo(dest: string, examplesDir = path.join(PROJECT_ROOT, 'examples')): void {
  execFileSync(path.join(examplesDir, 'make-agent-repo.sh'), [dest], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/**
 * Runs a program on this terminal with `env` over this process's environment, passing SIGINT and SIGTERM on;
 * how it ended (`notFound`: it does not exist). Rejects with any other spawn error.
 */
export function runInForeground(
  file: string,
  argv: string[],
  env: Record<string, string> = {},
): Promise<{ exitCode: number | null; signal: string | null; notFound: boolean }> {
  const child = spawn(file, argv, { stdio: 'inherit', env: { ...process.env, ...env } });
  const forward = (sig: NodeJS.Signals) => child.kill(sig);
  process.on('SIGINT', forward).on('SIGTERM', forward);
  return new Promise((resolve, reject) => {
    child.on('error', (e: NodeJS.ErrnoException) =>
      e.code === 'ENOENT' ? resolve({ exitCode: null, signal: null, notFound: true }) : reject(e),
    );
    child.on('exit', (exitCode, signal) => resolve({ exitCode, signal, notFound: false }));
  });
}

/**
 * A helper program the caller keeps running beside it (the sidecar's W&B logger): its stdin and stdout closed,
 * each line it writes to stderr handed to `onLine`. The caller stops it (kill) and watches `exit`/`error`.
 */
export function startHelperProcess(file: string, argv: string[], onLine: (line: string) => void): ChildProcess {
  const child = spawn(file, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.on('data', (d: Buffer) => {
    for (const line of d.toString().split('\n')) if (line.trim()) onLine(line);
  });
  return child;
}
