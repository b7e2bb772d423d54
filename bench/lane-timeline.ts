/**
 * Where an evaluation's lanes spend their time, task by task: from the Temporal history of the evaluation and its
 * chunks (runTask scheduled, started, the taskWorkDone signal, ended), the task's harbor log (when harbor was
 * launched) and its trials' result.json and reward file (Harbor's phases, and when the reward appeared). Times are
 * seconds since the evaluation started; each task is put on the lane it took over (the lane whose previous task
 * was released or ended last before it was scheduled).
 *
 *   node dist/bench/lane-timeline.js --address 127.0.0.1:7233 --eval <evaluation id> [--namespace default]
 *
 * bench/real-harbor-overhead.ts prints it for each round with `--timeline`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { connect } from '../client/connection';
import { trialFiles } from '../model/harbor/paths';
import { harborLogOf, runPaths } from '../model/paths';
import { jobNameFor } from '../model/harbor/job-name';
import { TASK_WORK_DONE_SIGNAL } from '../model/evaluation/lane-teardown';
import { stringArg } from './fixtures';

type Event = temporal.api.history.v1.IHistoryEvent;

/** One task's moments (ms since the epoch; null when unknown). */
export interface TaskTimes {
  task: string;
  scheduled: number;
  started: number | null;
  launched: number | null;
  trialStarted: number | null;
  envDone: number | null;
  agentDone: number | null;
  verifierDone: number | null;
  rewardOnDisk: number | null;
  workDoneSignal: number | null;
  ended: number | null;
  trialFinished: number | null;
}

const ms = (e: Event): number => {
  const t = e.eventTime;
  return t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0;
};
const at = (iso: string | null | undefined): number | null => (iso ? Date.parse(iso) : null);

async function eventsOf(client: Client, workflowId: string, runId?: string): Promise<Event[]> {
  return (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
}

/** Harbor's phases and the reward file's time, from the job's first trial dir. */
function trialMoments(
  jobDir: string,
): Pick<TaskTimes, 'trialStarted' | 'envDone' | 'agentDone' | 'verifierDone' | 'rewardOnDisk' | 'trialFinished'> {
  const none = { trialStarted: null, envDone: null, agentDone: null, verifierDone: null, rewardOnDisk: null, trialFinished: null };
  const trial = fs.existsSync(jobDir) ? fs.readdirSync(jobDir, { withFileTypes: true }).find((e) => e.isDirectory()) : undefined;
  if (!trial) return none;
  const files = trialFiles(path.join(jobDir, trial.name));
  const reward = [files.rewardText, files.reward].find((f) => fs.existsSync(f));
  const rewardOnDisk = reward ? fs.statSync(reward).mtimeMs : null;
  try {
    const r = JSON.parse(fs.readFileSync(files.result, 'utf8')) as Record<string, { finished_at?: string } | string | null>;
    const end = (k: string) => at((r[k] as { finished_at?: string } | null)?.finished_at);
    return {
      trialStarted: at(r.started_at as string),
      envDone: end('environment_setup'),
      agentDone: end('agent_execution'),
      verifierDone: end('verifier'),
      rewardOnDisk,
      trialFinished: at(r.finished_at as string),
    };
  } catch {
    return { ...none, rewardOnDisk };
  }
}

/** When vero last launched harbor for the job (its `# vero-harbor attempt … at <ISO>` line). */
function launchedAt(jobDir: string): number | null {
  try {
    const lines = fs.readFileSync(harborLogOf(jobDir), 'utf8').match(/^# vero-harbor attempt \S+ at (\S+):/gm) ?? [];
    const last = lines.at(-1);
    return last ? Date.parse(/ at (\S+):/.exec(last)![1]!) : null;
  } catch {
    return null;
  }
}

/** The tasks of one chunk's history. */
function chunkTasks(client: Client, events: Event[]): TaskTimes[] {
  const conv = client.options.loadedDataConverter.payloadConverter;
  const byEvent = new Map<number, TaskTimes & { jobDir: string }>();
  const byTask = new Map<string, TaskTimes>();
  for (const e of events) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s?.activityType?.name === 'runTask') {
      const input = conv.fromPayload(s.input!.payloads![0]!) as { task: string; runDir: string };
      const jobDir = jobDirOf(input.runDir, input.task);
      const t = {
        task: input.task,
        scheduled: ms(e),
        started: null,
        ended: null,
        workDoneSignal: null,
        launched: launchedAt(jobDir),
        jobDir,
        ...trialMoments(jobDir),
      };
      byEvent.set(Number(e.eventId), t);
      byTask.set(input.task, t);
    }
    const started = e.activityTaskStartedEventAttributes;
    if (started) setIf(byEvent.get(Number(started.scheduledEventId)), 'started', ms(e));
    const done = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes ?? e.activityTaskCanceledEventAttributes;
    if (done) setIf(byEvent.get(Number(done.scheduledEventId)), 'ended', ms(e));
    const sig = e.workflowExecutionSignaledEventAttributes;
    if (sig?.signalName === TASK_WORK_DONE_SIGNAL) {
      const { task } = conv.fromPayload(sig.input!.payloads![0]!) as { task: string };
      const t = byTask.get(task);
      if (t && t.workDoneSignal === null) t.workDoneSignal = ms(e);
    }
  }
  return [...byEvent.values()];
}

function setIf(t: TaskTimes | undefined, k: 'started' | 'ended', v: number): void {
  if (t && t[k] === null) t[k] = v;
}

const jobDirOf = (runDir: string, task: string): string => runPaths(runDir).job(jobNameFor(task)).dir;

/** The evaluation's own steps (its activities and chunks): name, scheduled, ended. */
export interface Step {
  name: string;
  scheduled: number;
  ended: number | null;
}

/** The activities and child workflows of one history, in order. */
function stepsOf(events: Event[]): Step[] {
  const byId = new Map<number, Step>();
  for (const e of events) {
    const name =
      e.activityTaskScheduledEventAttributes?.activityType?.name ?? e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
    if (name) byId.set(Number(e.eventId), { name, scheduled: ms(e), ended: null });
    const done =
      e.activityTaskCompletedEventAttributes?.scheduledEventId ??
      e.activityTaskFailedEventAttributes?.scheduledEventId ??
      e.childWorkflowExecutionCompletedEventAttributes?.initiatedEventId ??
      e.childWorkflowExecutionFailedEventAttributes?.initiatedEventId;
    const step = done !== undefined && done !== null ? byId.get(Number(done)) : undefined;
    if (step && step.ended === null) step.ended = ms(e);
  }
  return [...byId.values()];
}

export interface Timeline {
  start: number;
  end: number;
  steps: Step[];
  tasks: TaskTimes[];
}

/** Every runTask of the evaluation `evalId` (its chunks' histories), its own steps, and when it started and ended. */
export async function evaluationTimeline(client: Client, evalId: string): Promise<Timeline> {
  const events = await eventsOf(client, evalId);
  const tasks: TaskTimes[] = [];
  for (const e of events) {
    const child = e.childWorkflowExecutionStartedEventAttributes?.workflowExecution;
    if (child?.workflowId && child.runId) tasks.push(...chunkTasks(client, await eventsOf(client, child.workflowId, child.runId)));
  }
  return { start: ms(events[0]!), end: ms(events.at(-1)!), steps: stepsOf(events), tasks: tasks.sort((a, b) => a.scheduled - b.scheduled) };
}

/** A lane for each task: the lane whose task was released (its work-done signal) or ended last before it was scheduled. */
export function assignLanes(tasks: TaskTimes[], lanes: number): { lane: number; freedAt: number | null }[] {
  const free: { lane: number; at: number | null }[] = Array.from({ length: lanes }, (_, i) => ({ lane: i, at: null }));
  const busy: { lane: number; releasedAt: number }[] = [];
  return tasks.map((t) => {
    if (!free.length) {
      busy.sort((a, b) => a.releasedAt - b.releasedAt);
      const b = busy.shift()!;
      free.push({ lane: b.lane, at: b.releasedAt });
    }
    const f = free.shift()!;
    busy.push({ lane: f.lane, releasedAt: Math.min(t.workDoneSignal ?? Infinity, t.ended ?? Infinity) });
    return { lane: f.lane, freedAt: f.at };
  });
}

const COLUMNS = [
  ['sched', 'scheduled'],
  ['start', 'started'],
  ['launch', 'launched'],
  ['trial', 'trialStarted'],
  ['env', 'envDone'],
  ['agent', 'agentDone'],
  ['verif', 'verifierDone'],
  ['reward', 'rewardOnDisk'],
  ['signal', 'workDoneSignal'],
  ['t.end', 'trialFinished'],
  ['ended', 'ended'],
] as const;

/** The timeline as a table (seconds since the evaluation started), with the sums of the gaps that matter. */
export function timelineText(tl: Timeline, lanes: number): string {
  const rel = (v: number | null) => (v === null ? '     -' : ((v - tl.start) / 1000).toFixed(1).padStart(6));
  const placed = assignLanes(tl.tasks, lanes);
  const head = `lane  task                 gap ${COLUMNS.map(([h]) => h.padStart(6)).join(' ')}`;
  const rows = tl.tasks.map((t, i) => {
    const p = placed[i]!;
    const gap = p.freedAt === null ? '   -' : ((t.scheduled - p.freedAt) / 1000).toFixed(1).padStart(4);
    return `${String(p.lane).padStart(4)}  ${t.task.slice(0, 18).padEnd(18)} ${gap} ${COLUMNS.map(([, k]) => rel(t[k])).join(' ')}`;
  });
  const sum = (f: (t: TaskTimes) => number | null) => tl.tasks.reduce((a, t) => a + (f(t) ?? 0), 0) / 1000;
  const d = (a: number | null, b: number | null) => (a !== null && b !== null ? b - a : null);
  const gaps = placed.reduce((a, p, i) => a + (p.freedAt === null ? 0 : tl.tasks[i]!.scheduled - p.freedAt), 0) / 1000;
  const totals = [
    `evaluation ${((tl.end - tl.start) / 1000).toFixed(1)} s; first task scheduled at ${rel(tl.tasks[0]?.scheduled ?? null).trim()} s; last task ended at ${rel(Math.max(...tl.tasks.map((t) => t.ended ?? 0))).trim()} s`,
    `summed over tasks: lane freed → next scheduled ${gaps.toFixed(1)} s; scheduled → started ${sum((t) => d(t.scheduled, t.started)).toFixed(1)} s; ` +
      `started → harbor launched ${sum((t) => d(t.started, t.launched)).toFixed(1)} s; launched → trial started ${sum((t) => d(t.launched, t.trialStarted)).toFixed(1)} s; ` +
      `reward on disk → work-done signal ${sum((t) => d(t.rewardOnDisk, t.workDoneSignal)).toFixed(1)} s; trial finished → activity ended ${sum((t) => d(t.trialFinished, t.ended)).toFixed(1)} s`,
  ];
  const steps = tl.steps.map((st) => `step ${st.name}: ${rel(st.scheduled).trim()} → ${rel(st.ended).trim()} s`);
  return [...steps, head, ...rows, ...totals].join('\n');
}

async function main(): Promise<void> {
  const client = await connect(stringArg('--address', '127.0.0.1:7233'), stringArg('--namespace', 'default'));
  try {
    const tl = await evaluationTimeline(client, stringArg('--eval', ''));
    process.stdout.write(`${timelineText(tl, Number(stringArg('--lanes', '4')))}\n`);
  } finally {
    await client.connection.close();
  }
}

if (require.main === module)
  void main().catch((e: unknown) => {
    process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  });
