/**
 * What a chunk's recorded history shows of lanes released at teardown (workflows/chunk-teardowns.ts): the patch
 * markers it recorded, the tasks whose harbors signalled work-done (`taskWorkDone`), and the tasks whose activity
 * was scheduled while an earlier task's activity was still running after its work-done signal (a lane released
 * while that task tore down). Read from `temporal workflow show --output json`; the recorder checks the
 * `*.lane-teardown` fixtures with it before saving them, and a test checks the committed one.
 */

interface Payloads {
  payloads?: { data?: string }[];
}

/** The fields of a history event read here (the JSON of `temporal workflow show --output json`). */
interface HistoryEvent {
  eventId: string;
  eventType: string;
  markerRecordedEventAttributes?: { markerName: string; details?: Record<string, Payloads> };
  workflowExecutionSignaledEventAttributes?: { signalName: string; input?: Payloads };
  activityTaskScheduledEventAttributes?: { activityType: { name: string }; input?: Payloads };
  [attributes: string]: unknown;
}

/** A workflow's history as `temporal workflow show --output json` writes it. */
export interface History {
  events: HistoryEvent[];
}

export interface LaneTeardownCoverage {
  /** The ids of the patches the history recorded markers for. */
  patches: string[];
  /** The task of each `taskWorkDone` signal, in history order. */
  workDone: string[];
  /** Each task scheduled while a task that signalled work-done still ran, as "started ← tearing down". */
  startedWhileTearingDown: string[];
}

const first = (p: Payloads | undefined): unknown => {
  const data = p?.payloads?.[0]?.data;
  return data === undefined ? undefined : JSON.parse(Buffer.from(data, 'base64').toString('utf8'));
};

/** The scheduled event id an activity's closing event (completed, failed, timed out, cancelled) names. */
function closedActivity(e: HistoryEvent): string | null {
  for (const key of ['Completed', 'Failed', 'TimedOut', 'Canceled']) {
    const attrs = e[`activityTask${key}EventAttributes`] as { scheduledEventId?: string } | undefined;
    if (attrs?.scheduledEventId !== undefined) return attrs.scheduledEventId;
  }
  return null;
}

/** The coverage of one chunk history: see LaneTeardownCoverage. */
export function laneTeardownCoverage(history: History): LaneTeardownCoverage {
  const patches: string[] = [];
  const workDone: string[] = [];
  const startedWhileTearingDown: string[] = [];
  const running = new Map<string, string>(); // scheduled event id → task, while its activity runs
  const tearingDown = new Set<string>(); // tasks that signalled work-done and whose activity still runs
  for (const e of history.events) {
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_patch') patches.push((first(marker.details?.['patch-data']) as { id: string }).id);
    const signal = e.workflowExecutionSignaledEventAttributes;
    if (signal?.signalName === 'taskWorkDone') {
      const { task } = first(signal.input) as { task: string };
      workDone.push(task);
      tearingDown.add(task);
    }
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType.name === 'runTask') {
      const { task } = first(scheduled.input) as { task: string };
      for (const other of tearingDown) startedWhileTearingDown.push(`${task} ← ${other}`);
      running.set(e.eventId, task);
    }
    const closed = closedActivity(e);
    if (closed !== null && running.has(closed)) {
      tearingDown.delete(running.get(closed)!);
      running.delete(closed);
    }
  }
  return { patches, workDone, startedWhileTearingDown };
}
