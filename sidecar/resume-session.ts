/**
 * What relaunching a compiled task from a rescued session takes (`vero run --resume-from`), on the host, before
 * anything starts: the session (a `vero-session/` dir, the trial dir that holds one, or a tar archive of either,
 * gzipped or not) is unpacked, checked against the task (sidecar/session-check.ts: task, build digest, schema,
 * every file's digest and schema) and copied to a private dir, whose path goes to `harbor run`'s environment:
 * the task's compose file mounts it, read-only, where the relaunched sidecar restores it from.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tar from 'tar';
import { ConfigError } from '../model/errors';
import { RESUME_SESSION_ENV, SESSION_MANIFEST } from '../model/compiled-task/session-snapshot';
import { checkSessionDir, sessionBoundProblem, sessionRecords } from './session-check';
import { compiledServeConfig } from '../harbor/gateway-launch';
import { readJson } from '../infra/json-file';
import { trialFiles } from '../model/harbor/paths';
import { readSealKey } from './ledger-seal';

export interface ResumeLaunch {
  /** For the `harbor run` process (compose interpolation): the checked copy's path. */
  env: Record<string, string>;
  /** The checked copy (remove it once harbor has ended). */
  dir: string;
  /** When the session was taken, and how many evaluations it records. */
  takenAt: string;
  evaluations: number;
}

/** The build digest `vero build` recorded for the task (null for a build made before builds had one). */
function buildDigestOf(taskDir: string): string | null {
  return readJson<{ build_digest?: string }>(path.join(taskDir, '.vero-build.json'))?.build_digest ?? null;
}

/**
 * Unpacks a tar archive into `dest`: regular files and dirs only, no path that leaves it, and no more than a
 * session can hold (each member's declared size, their total and their count, checked from its header before
 * its data is written: a tar bomb is stopped at its first member past a bound).
 */
export async function unpackSession(archive: string, dest: string): Promise<void> {
  const refused: string[] = [];
  const seen = { bytes: 0, files: 0 };
  let tooLarge: string | null = null;
  const source = fs.createReadStream(archive);
  const unpacker = tar.x({
    cwd: dest,
    strict: true,
    preservePaths: false,
    filter: (p, entry) => {
      const type = 'type' in entry ? entry.type : null;
      const size = 'size' in entry && typeof entry.size === 'number' ? entry.size : 0;
      tooLarge ??= sessionBoundProblem(p, size, seen);
      if (tooLarge) unpacker.abort(new ConfigError(`--resume-from ${archive}: refusing it: ${tooLarge}`));
      const ok = (type === 'File' || type === 'Directory') && !path.isAbsolute(p) && !p.split(/[/\\]/).includes('..');
      if (!ok) refused.push(p);
      return ok && !tooLarge;
    },
  });
  await new Promise<void>((resolve, reject) => {
    source.on('error', reject);
    unpacker.on('error', reject);
    unpacker.on('close', () => resolve());
    source.pipe(unpacker);
  }).finally(() => source.destroy());
  if (refused.length)
    throw new ConfigError(
      `--resume-from ${archive}: refusing its member(s) ${refused.slice(0, 5).join(', ')} (links, devices or paths outside it)`,
    );
}

/** The session dir inside what was given: the dir itself, its `vero-session/`, or a trial's `artifacts/vero-session/`. */
function sessionDirIn(root: string): string | null {
  for (const d of [root, path.join(root, 'vero-session'), trialFiles(root).session])
    if (fs.existsSync(path.join(d, SESSION_MANIFEST))) return d;
  const only = fs.readdirSync(root, { withFileTypes: true }).filter((e) => e.isDirectory());
  return only.length === 1 ? sessionDirIn(path.join(root, only[0]!.name)) : null;
}

/** Checks the session for `taskDir` and stages it; throws a ConfigError naming every problem. */
export async function resumeLaunch(taskDir: string, archive: string): Promise<ResumeLaunch> {
  const cfg = compiledServeConfig(taskDir);
  if (!cfg) throw new ConfigError(`<task>: ${taskDir} is not a vero build output`);
  if (!fs.existsSync(archive)) throw new ConfigError(`--resume-from: ${archive} does not exist`);
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'vero-resume-'));
  try {
    const unpacked = path.join(staging, 'given');
    fs.mkdirSync(unpacked);
    let root = archive;
    if (fs.statSync(archive).isFile()) {
      await unpackSession(archive, unpacked).catch((e: Error) => {
        throw e instanceof ConfigError ? e : new ConfigError(`--resume-from ${archive}: not a readable tar archive (${e.message})`);
      });
      root = unpacked;
    }
    const dir = sessionDirIn(root);
    if (!dir)
      throw new ConfigError(
        `--resume-from ${archive}: no ${SESSION_MANIFEST} in it: give a rescued vero-session/ dir, the trial dir that holds one, or a tar archive of either`,
      );
    const want = { task_name: cfg.task_name, build_digest: buildDigestOf(taskDir), base_commit: cfg.base_commit, budgets: cfg.budgets };
    const seal_key = readSealKey(path.join(taskDir, 'environment', 'sidecar', 'ledger-seal.key'));
    const { manifest, problems } = checkSessionDir(dir, { ...want, seal_key });
    if (problems.length || !manifest)
      throw new ConfigError(
        `--resume-from ${archive}: refusing to resume ${taskDir} from it:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
      );
    // A private copy of exactly what was checked: what the sidecar mounts cannot change under it.
    const session = path.join(staging, 'session');
    for (const rel of [SESSION_MANIFEST, ...Object.keys(manifest.files)]) {
      fs.mkdirSync(path.dirname(path.join(session, rel)), { recursive: true });
      fs.copyFileSync(path.join(dir, rel), path.join(session, rel));
    }
    fs.rmSync(unpacked, { recursive: true, force: true });
    const evaluations = sessionRecords(session, manifest.files).length;
    return { env: { [RESUME_SESSION_ENV]: session }, dir: staging, takenAt: manifest.taken_at, evaluations };
  } catch (e) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw e;
  }
}
