/**
 * Where a lane handed across a chunk boundary spends its time, read from the histories of one evaluation:
 * for each chunk after the first, from the parent's lanesFreed signal that let it start to its first task's
 * activity start, in the four hops the lane protocol takes (workflows/lane-grants.ts):
 *
 *   parent WFT      lanesFreed signalled → StartChildWorkflowExecutionInitiated (the parent's workflow task)
 *   child created   → the chunk's WorkflowExecutionStarted (the server creates it)
 *   chunk WFT       → its first ActivityTaskScheduled (the chunk's first workflow task)
 *   activity start  → ActivityTaskStarted (matching, the worker's poll)
 *
 * Printed as medians in ms; the orchestration bench prints it after its rounds.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { chunkWorkflowId } from '../model/paths';
import { lanesFreedSignal } from '../workflows/queries';
import { median } from './fixtures';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const E = temporal.api.enums.v1.EventType;

const ms = (e: HistoryEvent | undefined): number | null => {
  const t = e?.eventTime;
  return t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : null;
};

export async function handoffLatency(client: Client, evalId: string, chunks: number): Promise<string> {
  const parent = (await client.workflow.getHandle(evalId).fetchHistory()).events ?? [];
  const hops: Record<'parentWft' | 'childCreated' | 'chunkWft' | 'activityStart', number[]> = {
    parentWft: [],
    childCreated: [],
    chunkWft: [],
    activityStart: [],
  };
  for (let k = 1; k < chunks; k++) {
    const chunkId = chunkWorkflowId(evalId, k);
    const initIndex = parent.findIndex(
      (e) =>
        e.eventType === E.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED &&
        e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId === chunkId,
    );
    if (initIndex < 0) continue;
    const signal = parent
      .slice(0, initIndex)
      .reverse()
      .find(
        (e) =>
          e.eventType === E.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED &&
          e.workflowExecutionSignaledEventAttributes?.signalName === lanesFreedSignal.name,
      );
    const child = (await client.workflow.getHandle(chunkId).fetchHistory()).events ?? [];
    const started = child.find((e) => e.eventType === E.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
    const scheduled = child.find((e) => e.eventType === E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
    const activityStarted = child.find((e) => e.eventType === E.EVENT_TYPE_ACTIVITY_TASK_STARTED);
    const [tSignal, tInit, tStarted, tScheduled, tActivity] = [signal, parent[initIndex], started, scheduled, activityStarted].map(ms);
    if ([tSignal, tInit, tStarted, tScheduled, tActivity].some((t) => t === null)) continue;
    hops.parentWft.push(tInit! - tSignal!);
    hops.childCreated.push(tStarted! - tInit!);
    hops.chunkWft.push(tScheduled! - tStarted!);
    hops.activityStart.push(tActivity! - tScheduled!);
  }
  const n = hops.parentWft.length;
  const ends = await startAndEnd(client, evalId, parent);
  if (n === 0) return `lane handoffs across chunks: none (one chunk); ${ends}`;
  const total = hops.parentWft.map((_, i) => hops.parentWft[i]! + hops.childCreated[i]! + hops.chunkWft[i]! + hops.activityStart[i]!);
  return (
    `lane handoffs across chunks (${n}): from the lanesFreed signal to the next chunk's first task, median ${median(total)} ms; ` +
    `median of each hop: parent WFT ${median(hops.parentWft)}, child created ${median(hops.childCreated)}, ` +
    `chunk WFT ${median(hops.chunkWft)}, activity start ${median(hops.activityStart)} ms; ${ends}`
  );
}

/** The fixed costs around the fan-out: from the evaluation's start to its first task, and from its last task to its result. */
async function startAndEnd(client: Client, evalId: string, parent: HistoryEvent[]): Promise<string> {
  const t0 = ms(parent[0]);
  const tEnd = ms(parent.at(-1));
  const first = (await client.workflow.getHandle(chunkWorkflowId(evalId, 0)).fetchHistory()).events ?? [];
  const firstTask = ms(first.find((e) => e.eventType === E.EVENT_TYPE_ACTIVITY_TASK_STARTED));
  const lastChunk = parent
    .filter((e) => e.eventType === E.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED)
    .map(ms)
    .at(-1);
  if (t0 === null || tEnd === null || firstTask === null || lastChunk == null) return 'start/end: not found';
  return `start → first task ${firstTask - t0} ms, last chunk done → result ${tEnd - lastChunk} ms`;
}
