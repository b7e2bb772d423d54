/**
 * Docker's stop wait, cut where it can only be a wait. Harbor stops a trial's environment with `docker compose
 * down` after its verifier: Docker sends the stop signal (SIGTERM) to each container's PID 1, waits its stop timeout
 * (10 s), then sends SIGKILL. Harbor's main service idles as `sh -c "sleep infinity"`, a PID 1 that neither catches
 * nor blocks SIGTERM, so the kernel drops the signal and every trial waits the full timeout before its SIGKILL, and
 * before Harbor writes its result.json (model/harbor/docker-signals.ts).
 *
 * While a task's harbor runs, vero watches the signals Docker sends to that job's trials' containers (the compose
 * projects Harbor names after each trial, infra/docker.ts). When a trial whose verifier has written its reward has
 * its idle main service sent a stop signal that the service's PID 1 drops, vero sends the SIGKILL at once: the same
 * signal Docker would send at the timeout, to the same container, which runs nothing but its `sleep` meanwhile. Any
 * other container (a task's own service, an init, one still running something) is left its full timeout, and
 * containers of other jobs, or not Harbor's, are never touched.
 */
import * as path from 'node:path';
import { onContainerSignals, type ContainerSignal } from '../infra/docker-events';
import { composeProjectPrefix, containerProcesses, killContainer, trialDirNames } from '../infra/docker';
import { appendToLog } from '../infra/file-tail';
import { usesLocalDocker } from '../model/harbor/config';
import { stopOnlyWaits } from '../model/harbor/docker-signals';
import type { TaskAttempt } from './task-attempt';
import { hasReward } from './work-done';

/** The compose service Harbor's docker environment runs the trial in (its compose files' `main`). */
const HARBOR_MAIN_SERVICE = 'main';

/** The trial of this job whose compose project this is (`<trial>__env`, `<trial>__verifier__…`), or null. */
function trialOfProject(project: string, jobDir: string): string | null {
  return trialDirNames(jobDir).find((trial) => project.startsWith(composeProjectPrefix(trial))) ?? null;
}

/**
 * SIGKILL now to the `main` service of a rewarded trial of the job, when its stop could only wait (Harbor's idle
 * main service, whose PID 1 drops the signal); whether it was sent.
 */
async function cutStopWait(s: ContainerSignal, jobDir: string, env: Record<string, string>): Promise<boolean> {
  const trial = s.signal === 9 || s.service !== HARBOR_MAIN_SERVICE ? null : trialOfProject(s.project, jobDir);
  if (trial === null || !hasReward(path.join(jobDir, trial))) return false;
  if (!stopOnlyWaits(await containerProcesses(s.id, env), s.signal)) return false;
  return killContainer(s.id, env);
}

/** The line a cut adds to the task's harbor log. */
const cutNote = (s: ContainerSignal): string =>
  `# vero-harbor: SIGKILL to ${s.name || s.id} (project ${s.project}) at once: its PID 1 drops signal ${s.signal} and ` +
  "it runs only Harbor's `sleep infinity`, so Docker's stop could only wait its timeout and then send the same SIGKILL\n";

/**
 * Cuts the stop waits of this task's trials while its harbor runs (Harbor on local Docker only), each noted in the
 * task's harbor log. Returns the function that stops watching (resolved once a stream it alone used has ended).
 */
export function cutStopWaits(t: TaskAttempt): () => Promise<void> {
  if (!usesLocalDocker(t.s.harbor.environment)) return async () => undefined;
  return onContainerSignals(t.env, (s) => {
    cutStopWait(s, t.jobDir, t.env)
      .then((cut) => cut && appendToLog(t.logFile, cutNote(s)))
      .catch((e: unknown) =>
        t.ctx.log.warn("a cut of Docker's stop wait failed, or its note in the harbor log did", { task: t.task, error: String(e) }),
      );
  });
}
