/**
 * `vero clean`: what a home holds that nobody needs any more, by a retention rule, and its removal.
 *
 * - `runs/<evalId>/` (Harbor job dirs, logs, chunk files): of an evaluation that is not running and whose last
 *   change is older than the rule. Its result stays (the result file and Temporal's history).
 * - `results/<evalId>.json` and `results/<evalId>/`: only of an evaluation Temporal no longer has (its
 *   retention ended, or another server): nothing can show it any more but the file.
 * - `worktrees/<commit>/`: older than the rule and not the candidate of a running evaluation (the bare mirrors
 *   in `repos/` stay: a worktree is remade from them in seconds).
 *
 * Never touched: anything of a running evaluation, and anything else under the home.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client, WorkflowNotFoundError } from '@temporalio/client';
import { git } from '../infra/git';
import { homePaths } from '../model/paths';
import { VeroCandidate } from '../model/search-attributes';

export interface CleanItem {
  path: string;
  kind: 'run dir' | 'result' | 'worktree';
  /** Why it may go, for a person. */
  reason: string;
  bytes: number;
}

/** Bytes under a path (files only; symlinks not followed). */
function sizeOf(p: string): number {
  const st = fs.lstatSync(p);
  if (!st.isDirectory()) return st.size;
  return fs.readdirSync(p).reduce((n, e) => n + sizeOf(path.join(p, e)), 0);
}

/** The newest modification time under a path (a run dir's last write). */
function lastChange(p: string): number {
  const st = fs.lstatSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  return fs.readdirSync(p).reduce((t, e) => Math.max(t, lastChange(path.join(p, e))), st.mtimeMs);
}

const entries = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []);

type Known = { status: string; candidate: string | null } | null;

async function describeEval(client: Client, evalId: string): Promise<Known> {
  try {
    const d = await client.workflow.getHandle(evalId).describe();
    return { status: d.status.name, candidate: d.typedSearchAttributes.get(VeroCandidate) ?? null };
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) return null;
    throw e;
  }
}

/** What `vero clean` would remove from `home` with this retention (seconds); nothing of a running evaluation. */
export async function planClean(client: Client, home: string, olderThanSec: number, now = Date.now()): Promise<CleanItem[]> {
  const cutoff = now - olderThanSec * 1000;
  const age = (ms: number) => `${Math.floor((now - ms) / 86_400_000)} d old`;
  const ids = [
    ...new Set([...entries(path.join(home, 'runs')), ...entries(path.join(home, 'results')).map((f) => f.replace(/\.json$/, ''))]),
  ];
  const known = new Map<string, Known>();
  for (const id of ids) known.set(id, await describeEval(client, id));
  const runningCommits = new Set([...known.values()].filter((k) => k?.status === 'RUNNING' && k.candidate).map((k) => k!.candidate!));
  const items: CleanItem[] = [];
  for (const id of entries(path.join(home, 'runs'))) {
    const dir = path.join(home, 'runs', id);
    const k = known.get(id);
    if (k?.status === 'RUNNING') continue;
    const changed = lastChange(dir);
    if (changed > cutoff) continue;
    items.push({
      path: dir,
      kind: 'run dir',
      reason: `${k ? k.status.toLowerCase() : 'not in Temporal'}, ${age(changed)}`,
      bytes: sizeOf(dir),
    });
  }
  for (const id of ids) {
    if (known.get(id) !== null) continue;
    for (const p of [homePaths(home).resultFile(id), path.join(home, 'results', id)]) {
      if (fs.existsSync(p)) items.push({ path: p, kind: 'result', reason: 'its evaluation is not in Temporal any more', bytes: sizeOf(p) });
    }
  }
  for (const commit of entries(path.join(home, 'worktrees'))) {
    const dir = path.join(home, 'worktrees', commit);
    if (runningCommits.has(commit) || !fs.statSync(dir).isDirectory()) continue;
    const changed = fs.statSync(dir).mtimeMs;
    if (changed > cutoff) continue;
    items.push({ path: dir, kind: 'worktree', reason: `no running evaluation uses it, ${age(changed)}`, bytes: sizeOf(dir) });
  }
  return items;
}

/** Removes the items, then lets every mirror forget the worktrees that are gone. */
export async function applyClean(home: string, items: CleanItem[]): Promise<void> {
  for (const item of items) fs.rmSync(item.path, { recursive: true, force: true });
  if (!items.some((i) => i.kind === 'worktree')) return;
  for (const mirror of entries(path.join(home, 'repos'))) {
    await git(['-C', path.join(home, 'repos', mirror), 'worktree', 'prune']).catch(() => undefined);
  }
}
