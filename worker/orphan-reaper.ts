/**
 * Stops harbor process groups that no attempt will adopt. A worker that dies leaves its harbor running so that
 * the task's next attempt on this host adopts it (no trial runs twice). When that next attempt runs on another
 * host instead — or the task or the evaluation is already over — the orphan would go on spending (model calls,
 * containers) until Harbor's own timeouts. Every `vero worker` looks at this host's record of groups whose
 * owner is gone, asks Temporal about their activity, and stops (as a cancel would: SIGTERM, grace, SIGKILL,
 * Docker leftovers) those that are not waiting for an attempt. Only groups of its own deployment (the same
 * server's namespace id and task queue): the record is shared by every worker on the host, whatever server
 * it serves. A group of the record that is gone (its harbor died with its worker, before its teardown) needs no
 * server's word: whatever the deployment, its trials' Docker leftovers are removed (harbor/trial-leftovers.ts).
 */
import * as fs from 'node:fs';
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { sameDeployment, type Deployment } from '../infra/deployment';
import { forgetGroup, HostGroup, hostGroupRecords, hostId } from '../infra/host-groups';
import { processAlive, stopGroup } from '../infra/process-group';
import { parseWorkerIdentity } from '../model/worker-identity';
import { onOrphanLeft } from '../harbor/orphans';
import { removeDeadHarborLeftovers } from '../harbor/trial-leftovers';

export type OrphanVerdict = { stop: false } | { stop: true; why: string };

/** Whether an orphaned group should be stopped, from its activity's state in Temporal. */
export async function judgeOrphan(client: Client, g: HostGroup, host = hostId()): Promise<OrphanVerdict> {
  let desc;
  try {
    desc = await client.workflow.getHandle(g.workflowId).describe();
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) return { stop: true, why: 'its workflow no longer exists' };
    throw e;
  }
  if (desc.status.name !== 'RUNNING') return { stop: true, why: `its workflow is ${desc.status.name.toLowerCase()}` };
  const pending = (desc.raw.pendingActivities ?? []).find((a) => a.activityId === g.activityId);
  if (!pending) return { stop: true, why: 'its task is no longer running (finished by another attempt)' };
  const started = pending.state === temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
  const by = pending.lastWorkerIdentity ?? '';
  // A later attempt runs on another host: it started a harbor of its own there.
  if (started && (pending.attempt ?? 0) > g.attempt && by && parseWorkerIdentity(by).host !== host)
    return { stop: true, why: `attempt ${pending.attempt} of its task runs on ${by}` };
  return { stop: false }; // waiting for an attempt, which adopts it when it lands on this host
}

export interface ReaperOptions {
  client: Client;
  /** The reaper's own deployment: it acts only on groups recorded with the same one. */
  deployment: Deployment;
  intervalMs?: number;
  graceMs?: number;
  log: (message: string, meta: Record<string, unknown>) => void;
}

/**
 * What a harbor of this host's record that is gone (died with its worker, say) left in Docker: removed, and then its
 * record dropped. While Docker does not answer, the record stays for the next pass.
 */
async function removeLeftoversOfGone(gone: HostGroup[], log: ReaperOptions['log']): Promise<void> {
  for (const g of gone) {
    const removed = await removeDeadHarborLeftovers(g.jobDir, g.pidFile, g, process.env as Record<string, string>).catch(() => null);
    if (!removed) continue;
    forgetGroup(g.pid, g.host);
    if (Object.values(removed).some((l) => l.length))
      log('removed the Docker leftovers of a dead harbor', { pid: g.pid, workflowId: g.workflowId, activityId: g.activityId, ...removed });
  }
}

/** One pass over this host's orphans; returns the pids it stopped. */
export async function reapOrphans(opts: ReaperOptions): Promise<number[]> {
  const stopped: number[] = [];
  const { live, gone } = hostGroupRecords();
  await removeLeftoversOfGone(gone, opts.log);
  for (const g of live) {
    if (g.ownerPid > 0 && processAlive(g.ownerPid)) continue; // run or watched by a live worker
    // Another server's (or queue's) group: "not found" on this server would say nothing about it.
    if (!sameDeployment(g.deployment, opts.deployment)) continue;
    const verdict = await judgeOrphan(opts.client, g).catch(() => ({ stop: false }) as const);
    if (!verdict.stop) continue;
    opts.log('stopping an orphaned harbor', { pid: g.pid, workflowId: g.workflowId, activityId: g.activityId, why: verdict.why });
    await stopGroup(g.pid, { graceMs: opts.graceMs ?? 60_000, signal: 'SIGTERM', target: 'leader' });
    stopped.push(g.pid);
    // Docker not answering: the record and the pid file (which names the trials) stay, and the next pass, which
    // finds this group gone, removes its leftovers.
    if (!(await removeDeadHarborLeftovers(g.jobDir, g.pidFile, g, process.env as Record<string, string>).catch(() => null))) continue;
    forgetGroup(g.pid, g.host);
    try {
      if ((JSON.parse(fs.readFileSync(g.pidFile, 'utf8')) as { pid?: number }).pid === g.pid) fs.rmSync(g.pidFile, { force: true });
    } catch {
      /* gone already */
    }
  }
  return stopped;
}

/** Reaps now, every `intervalMs` (default 60 s) and whenever a harbor of this process is left without an owner, until stopped. */
export function startOrphanReaper(opts: ReaperOptions): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const pass = () => {
    running = running.then(() => reapOrphans(opts)).catch((e: unknown) => opts.log('orphan reaper pass failed', { error: String(e) }));
  };
  pass();
  const timer = setInterval(pass, opts.intervalMs ?? 60_000);
  timer.unref();
  // A harbor left for a next attempt is looked at now: when its workflow was terminated, none comes.
  const unsubscribe = onOrphanLeft(pass);
  return {
    stop: async () => {
      unsubscribe();
      clearInterval(timer);
      await running;
    },
  };
}
