/**
 * Where a lane handed across a chunk boundary spends its time, read from the histories of one evaluation:
 * for each chunk after the first, from the parent's lanesFreed signal that gave it its first lane to its first
 * task's activity start, in the hops the lane protocol takes (workflows/lane-grants.ts). A chunk the lane started:
 *
 *   parent WFT      lanesFreed signalled → StartChildWorkflowExecutionInitiated (the parent's workflow task)
 *   child created   → the chunk's WorkflowExecutionStarted (the server creates it)
 *   chunk WFT       → its first ActivityTaskScheduled (the chunk's first workflow task)
 *   activity start  → ActivityTaskStarted (matching, the worker's poll)
 *
 * A chunk started ahead of its lanes (patched 'prestart-chunks'): the parent's WFT ends in the grantLanes signal
 * (SignalExternalWorkflowExecutionInitiated), "signal delivered" is the chunk's WorkflowExecutionSignaled, and
 * "chunk WFT" runs from there to its first ActivityTaskScheduled.
 *
 * Printed as medians in ms; the orchestration bench prints it after its rounds.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { chunkWorkflowId } from '../model/paths';
import { grantLanesSignal, lanesFreedSignal } from '../workflows/lane-signals';
import { median } from './fixtures';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const E = temporal.api.enums.v1.EventType;

const ms = (e: HistoryEvent | undefined): number | null => {
  const t = e?.eventTime;
  return t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : null;
};

type Hop = 'parentWft' | 'childCreated' | 'chunkWft' | 'activityStart';

/** The events that name an earlier one (`ref`: that one's id), by that id (the first such event wins). */
function byRef(events: HistoryEvent[], ref: (e: HistoryEvent) => unknown): Map<number, HistoryEvent> {
  const out = new Map<number, HistoryEvent>();
  for (const e of events) {
    const id = ref(e);
    if (id !== undefined && id !== null && !out.has(Number(id))) out.set(Number(id), e);
  }
  return out;
}

/** The ActivityTaskStarted event of a scheduled activity. */
const startedEventOf = (events: HistoryEvent[], scheduled: HistoryEvent): HistoryEvent | undefined =>
  byRef(events, (e) => e.activityTaskStartedEventAttributes?.scheduledEventId).get(Number(scheduled.eventId));

/** The parent's event that handed chunk `chunkId` its first lane: starting it with lanes, or its first grant. */
function handoffEvent(parent: HistoryEvent[], chunkId: string): { index: number; prestarted: boolean } | null {
  const init = parent.findIndex(
    (e) =>
      e.eventType === E.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED &&
      e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId === chunkId,
  );
  if (init < 0) return null;
  const input = parent[init]!.startChildWorkflowExecutionInitiatedEventAttributes?.input?.payloads?.[0]?.data;
  const lanes = input ? (JSON.parse(Buffer.from(input).toString()) as { lanes?: number }).lanes : undefined;
  if (lanes !== 0) return { index: init, prestarted: false };
  const grant = parent.findIndex(
    (e) =>
      e.eventType === E.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED &&
      e.signalExternalWorkflowExecutionInitiatedEventAttributes?.workflowExecution?.workflowId === chunkId &&
      e.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName === grantLanesSignal.name,
  );
  return grant < 0 ? null : { index: grant, prestarted: true };
}

export async function handoffLatency(client: Client, evalId: string, chunks: number): Promise<string> {
  const parent = (await client.workflow.getHandle(evalId).fetchHistory()).events ?? [];
  const hops: Record<Hop, number[]> = { parentWft: [], childCreated: [], chunkWft: [], activityStart: [] };
  let prestarted = 0;
  for (let k = 1; k < chunks; k++) {
    const chunkId = chunkWorkflowId(evalId, k);
    const handoff = handoffEvent(parent, chunkId);
    if (!handoff) continue;
    const signal = parent
      .slice(0, handoff.index)
      .reverse()
      .find(
        (e) =>
          e.eventType === E.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED &&
          e.workflowExecutionSignaledEventAttributes?.signalName === lanesFreedSignal.name,
      );
    const child = (await client.workflow.getHandle(chunkId).fetchHistory()).events ?? [];
    const given = handoff.prestarted
      ? child.find((e) => e.eventType === E.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)
      : child.find((e) => e.eventType === E.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
    const scheduled = child.find((e) => e.eventType === E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
    // Its own started event (written when it completes, so not the first started event in the history).
    const activityStarted = scheduled && startedEventOf(child, scheduled);
    const times = [signal, parent[handoff.index], given, scheduled, activityStarted].map(ms);
    if (times.some((t) => t === null)) continue;
    const [tSignal, tParent, tGiven, tScheduled, tActivity] = times as number[];
    if (handoff.prestarted) prestarted++;
    hops.parentWft.push(tParent! - tSignal!);
    hops.childCreated.push(tGiven! - tParent!);
    hops.chunkWft.push(tScheduled! - tGiven!);
    hops.activityStart.push(tActivity! - tScheduled!);
  }
  const n = hops.parentWft.length;
  const ends = await startAndEnd(client, evalId, parent);
  if (n === 0) return `lane handoffs across chunks: none (one chunk); ${ends}`;
  const total = hops.parentWft.map((_, i) => hops.parentWft[i]! + hops.childCreated[i]! + hops.chunkWft[i]! + hops.activityStart[i]!);
  return (
    `lane handoffs across chunks (${n}, ${prestarted} to a chunk started ahead of its lanes): from the lanesFreed signal to the next chunk's first task, median ${median(total)} ms; ` +
    `median of each hop: parent WFT ${median(hops.parentWft)}, ${prestarted === n ? 'grant signal delivered' : prestarted === 0 ? 'child created' : 'child created or grant delivered'} ${median(hops.childCreated)}, ` +
    `chunk WFT ${median(hops.chunkWft)}, activity start ${median(hops.activityStart)} ms; ${ends}`
  );
}

/** The fixed costs around the fan-out: from the evaluation's start to its first task, and from its last task to its result. */
async function startAndEnd(client: Client, evalId: string, parent: HistoryEvent[]): Promise<string> {
  const t0 = ms(parent[0]);
  const tEnd = ms(parent.at(-1));
  const first = (await client.workflow.getHandle(chunkWorkflowId(evalId, 0)).fetchHistory()).events ?? [];
  const firstScheduled = first.find((e) => e.eventType === E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
  const firstTask = ms(firstScheduled && startedEventOf(first, firstScheduled));
  const lastChunk = parent
    .filter((e) => e.eventType === E.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED)
    .map(ms)
    .at(-1);
  if (t0 === null || tEnd === null || firstTask === null || lastChunk == null) return 'start/end: not found';
  return `start → first task ${firstTask - t0} ms, last chunk done → result ${tEnd - lastChunk} ms`;
}

/**
 * A lane's turnaround inside a chunk, from the histories: a task's ActivityTaskCompleted to the start of the task
 * the same lane runs next (scheduled by the workflow task that completion caused). Its hops: the workflow task's
 * dispatch (→ WorkflowTaskStarted), the worker's workflow task (→ WorkflowTaskCompleted, when the next activity is
 * scheduled), the activity's dispatch (→ ActivityTaskStarted). xargs pays none of these between two runs.
 */
export async function laneTurnaround(client: Client, evalId: string, chunks: number): Promise<string> {
  const hops = { wftDispatch: [] as number[], wft: [] as number[], activityStart: [] as number[] };
  for (let k = 0; k < chunks; k++) {
    const events = (await client.workflow.getHandle(chunkWorkflowId(evalId, k)).fetchHistory()).events ?? [];
    // Each event by the earlier event it names: a WFT's completion by its start, an activity by the WFT that
    // scheduled it, an activity's start by its scheduling.
    const wftCompletedBy = byRef(events, (e) => e.workflowTaskCompletedEventAttributes?.startedEventId);
    const scheduledBy = byRef(events, (e) => e.activityTaskScheduledEventAttributes?.workflowTaskCompletedEventId);
    const startedBy = byRef(events, (e) => e.activityTaskStartedEventAttributes?.scheduledEventId);
    for (const [i, e] of events.entries()) {
      if (e.eventType !== E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) continue;
      const wftStarted = events.slice(i + 1).find((x) => x.eventType === E.EVENT_TYPE_WORKFLOW_TASK_STARTED);
      const wftCompleted = wftStarted && wftCompletedBy.get(Number(wftStarted.eventId));
      const scheduled = wftCompleted && scheduledBy.get(Number(wftCompleted.eventId));
      const started = scheduled && startedBy.get(Number(scheduled.eventId));
      const t = [e, wftStarted, wftCompleted, started].map(ms);
      if (t.some((x) => x === null)) continue;
      hops.wftDispatch.push(t[1]! - t[0]!);
      hops.wft.push(t[2]! - t[1]!);
      hops.activityStart.push(t[3]! - t[2]!);
    }
  }
  const n = hops.wft.length;
  if (n === 0) return 'lane turnaround inside chunks: none measured';
  const total = hops.wft.map((_, i) => hops.wftDispatch[i]! + hops.wft[i]! + hops.activityStart[i]!);
  return (
    `lane turnaround inside chunks (${n}): a task's completion to the lane's next task start, median ${median(total)} ms; ` +
    `workflow task dispatch ${median(hops.wftDispatch)}, workflow task ${median(hops.wft)}, activity start ${median(hops.activityStart)} ms`
  );
}
