/**
 * `vero clean`: what a home holds that nobody needs any more, by a retention rule, and its removal.
 *
 * - `runs/<evalId>/` (Harbor job dirs, logs, chunk files): of an evaluation that is not running and whose last
 *   change is older than the rule. Its result stays (the result file and Temporal's history).
 * - `results/<evalId>.json` and `results/<evalId>/`: only of an evaluation Temporal no longer has (its
 *   retention ended), and only with `--forgotten`: from here another server's evaluation looks the same.
 * - `worktrees/<commit>/`: older than the rule and not the candidate of a running evaluation (the bare mirrors
 *   in `repos/` stay: a worktree is remade from them in seconds).
 *
 * Never touched: anything of a running evaluation or of one whose harbor still runs (a live pid file, or another
 * host's), and anything else under the home.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import { readPidFile } from '../harbor/orphans';
import { git } from '../infra/git';
import { hostId } from '../infra/host-groups';
import { processAlive } from '../infra/process-alive';
import { homePaths, isPidFile, runPaths } from '../model/paths';
import { VeroCandidate } from '../model/evaluation/search-attributes';
import { describeIfAny } from './connection';

export interface CleanItem {
  path: string;
  kind: 'run dir' | 'result' | 'worktree';
  /** Why it may go, for a person. */
  reason: string;
  bytes: number;
}

/** `read()`, or `absent` for what went away meanwhile (a run writing and renaming while it is looked at). */
function ifThere<T>(read: () => T, absent: T): T {
  try {
    return read();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return absent;
    throw e;
  }
}
const lstatIfThere = (p: string): fs.Stats | null => ifThere(() => fs.lstatSync(p), null);
const childrenOf = (p: string): string[] => ifThere(() => fs.readdirSync(p), []);

/** Bytes under a path (files only; symlinks not followed). */
function sizeOf(p: string): number {
  const st = lstatIfThere(p);
  if (!st?.isDirectory()) return st?.size ?? 0;
  return childrenOf(p).reduce((n, e) => n + sizeOf(path.join(p, e)), 0);
}

/** The newest modification time under a path (a run dir's last write). */
function lastChange(p: string): number {
  const st = lstatIfThere(p);
  if (!st?.isDirectory()) return st?.mtimeMs ?? 0;
  return childrenOf(p).reduce((t, e) => Math.max(t, lastChange(path.join(p, e))), st.mtimeMs);
}

const entries = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []);

type Known = { status: string; candidate: string | null } | null;

async function describeEval(client: Client, evalId: string): Promise<Known> {
  const d = await describeIfAny(client, evalId);
  return d && { status: d.status.name, candidate: d.typedSearchAttributes.get(VeroCandidate) ?? null };
}

/**
 * Whether a harbor of this evaluation's run dirs may still be running: a pid file whose process is alive on this
 * host, or one written by another host (a shared home: that host's processes cannot be checked from here).
 */
function harborRunning(evalDir: string): boolean {
  for (const run of entries(evalDir)) {
    const jobs = runPaths(path.join(evalDir, run)).jobsDir;
    for (const f of entries(jobs).filter(isPidFile)) {
      const p = readPidFile(path.join(jobs, f)); // null: half-written or gone, not a running harbor
      if (p !== null && (p.host !== hostId() || processAlive(p.pid))) return true;
    }
  }
  return false;
}

/** The candidate commit in an evaluation id (`eval-<sha>-<digest>`, model/evaluation/identity.ts), if it is one. */
const commitOf = (evalId: string): string | null => /^eval-([0-9a-f]{40})-/.exec(evalId)?.[1] ?? null;

export interface CleanPlan {
  items: CleanItem[];
  /** Evaluations in this home that this server does not know: maybe another server's; left unless `forgotten`. */
  unknown: string[];
}

/**
 * What `vero clean` would remove from `home` with this retention (seconds). Nothing of a running evaluation, nor
 * of one whose harbor still runs (whatever server it belongs to); what this server does not know only with
 * `forgotten` (a home may be shared by two servers: the other one's evaluations look forgotten from here).
 */
export async function planClean(
  client: Client,
  home: string,
  olderThanSec: number,
  opts: { forgotten?: boolean; now?: number } = {},
): Promise<CleanPlan> {
  const now = opts.now ?? Date.now();
  const cutoff = now - olderThanSec * 1000;
  const age = (ms: number) => `${Math.floor((now - ms) / 86_400_000)} d old`;
  const { runsDir: runs, resultsDir } = homePaths(home);
  const ids = [...new Set([...entries(runs), ...entries(resultsDir).map((f) => f.replace(/\.json$/, ''))])];
  const known = new Map<string, Known>();
  for (const id of ids) known.set(id, await describeEval(client, id));
  const busy = new Set(entries(runs).filter((id) => known.get(id)?.status === 'RUNNING' || harborRunning(path.join(runs, id))));
  const unknown = ids.filter((id) => known.get(id) === null && !busy.has(id));
  const mayGo = (id: string) => !busy.has(id) && (known.get(id) !== null || opts.forgotten === true);
  const inUse = new Set([
    ...[...known.values()].filter((k) => k?.status === 'RUNNING' && k.candidate).map((k) => k!.candidate!),
    ...[...busy].map(commitOf).filter((c): c is string => c !== null),
  ]);
  const items: CleanItem[] = [];
  for (const id of entries(runs).filter(mayGo)) {
    const dir = path.join(runs, id);
    const changed = lastChange(dir);
    if (changed > cutoff) continue;
    const k = known.get(id);
    items.push({
      path: dir,
      kind: 'run dir',
      reason: `${k ? k.status.toLowerCase() : 'not in Temporal'}, ${age(changed)}`,
      bytes: sizeOf(dir),
    });
  }
  for (const id of ids.filter((i) => known.get(i) === null && mayGo(i))) {
    for (const p of [homePaths(home).resultFile(id), homePaths(home).resultDir(id)]) {
      if (fs.existsSync(p)) items.push({ path: p, kind: 'result', reason: 'its evaluation is not in Temporal any more', bytes: sizeOf(p) });
    }
  }
  for (const commit of entries(homePaths(home).worktreesDir)) {
    const dir = homePaths(home).worktree(commit);
    if (inUse.has(commit) || !fs.statSync(dir).isDirectory()) continue;
    const changed = fs.statSync(dir).mtimeMs;
    if (changed > cutoff) continue;
    items.push({ path: dir, kind: 'worktree', reason: `no running evaluation uses it, ${age(changed)}`, bytes: sizeOf(dir) });
  }
  return { items, unknown: opts.forgotten ? [] : unknown };
}

/** An item left in place at removal time, and why (it came into use since the plan, or could not be removed). */
export interface LeftItem {
  item: CleanItem;
  reason: string;
}

/**
 * Why an item planned for removal must stay now (null: it may still go). Checked again right before each removal:
 * between the plan and the removal an evaluation may have started (`start-eval --force`) or written to it.
 */
async function stillInUse(client: Client, home: string, item: CleanItem, cutoff: number): Promise<string | null> {
  const id = path.basename(item.path).replace(/\.json$/, '');
  if (!fs.existsSync(item.path)) return 'gone already';
  if (item.kind === 'result') return (await describeEval(client, id)) === null ? null : 'its evaluation is in Temporal again';
  if (item.kind === 'run dir') {
    if ((await describeEval(client, id))?.status === 'RUNNING') return 'its evaluation is running again';
    if (harborRunning(item.path)) return 'a harbor of it runs';
    return lastChange(item.path) > cutoff ? 'it changed since the plan' : null;
  }
  if (fs.statSync(item.path).mtimeMs > cutoff) return 'it changed since the plan';
  const runs = homePaths(home).runsDir;
  for (const evalId of entries(runs).filter((e) => commitOf(e) === id)) {
    const k = await describeEval(client, evalId);
    if (k?.status === 'RUNNING' || harborRunning(path.join(runs, evalId))) return `${evalId} uses it`;
  }
  const running = client.workflow.list({
    query: `WorkflowType = 'evaluateCandidate' AND ExecutionStatus = 'Running' AND VeroCandidate = '${id.replace(/[^0-9a-f]/g, '')}'`,
    pageSize: 1,
  });
  for await (const w of running) return `${w.workflowId} uses it`;
  return null;
}

/**
 * Removes the items that are still unused (each checked again right before it goes), then lets every mirror
 * forget the worktrees that are gone. What came into use since the plan, or could not be removed (a run writing
 * into it: ENOTEMPTY), is left and said.
 */
export async function applyClean(
  client: Client,
  home: string,
  items: CleanItem[],
  olderThanSec: number,
  opts: { now?: number } = {},
): Promise<{ removed: CleanItem[]; left: LeftItem[] }> {
  const cutoff = (opts.now ?? Date.now()) - olderThanSec * 1000;
  const removed: CleanItem[] = [];
  const left: LeftItem[] = [];
  for (const item of items) {
    const busy = await stillInUse(client, home, item, cutoff);
    if (busy) {
      left.push({ item, reason: busy });
      continue;
    }
    try {
      fs.rmSync(item.path, { recursive: true, force: true });
      removed.push(item);
    } catch (e) {
      left.push({ item, reason: `not removed: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message.split('\n')[0]}` });
    }
  }
  if (removed.some((i) => i.kind === 'worktree')) {
    for (const mirror of entries(homePaths(home).reposDir)) {
      await git(['-C', path.join(homePaths(home).reposDir, mirror), 'worktree', 'prune']).catch(() => undefined);
    }
  }
  return { removed, left };
}
