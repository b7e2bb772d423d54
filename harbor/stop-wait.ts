/**
 * Docker's stop wait, cut where it can only be a wait. Harbor stops a trial's environment with `docker compose
 * down` after its verifier: Docker sends the stop signal (SIGTERM) to each container's PID 1, waits its stop timeout
 * (10 s), then sends SIGKILL. Harbor's main service runs `sh -c "sleep infinity"`, a PID 1 that neither catches nor
 * blocks SIGTERM, so the kernel drops the signal and every trial waits the full timeout before its SIGKILL, and
 * before Harbor writes its result.json (model/harbor/docker-signals.ts).
 *
 * While a task's harbor runs, vero watches the signals Docker sends to that job's trials' containers (the compose
 * projects Harbor names after each trial, infra/docker.ts). When one is sent a stop signal its PID 1 drops, vero
 * sends the SIGKILL at once: the same signal Docker would send at the timeout, to the same container, with nothing
 * able to happen in between. A PID 1 that handles the signal (an init, a server that shuts down cleanly) is left
 * its full timeout. Containers of other jobs, or not Harbor's, are never touched.
 */
import { onContainerSignals, type ContainerSignal } from '../infra/docker-events';
import { composeProjectPrefix, containerProcesses, killContainer, trialDirNames } from '../infra/docker';
import { appendToLog } from '../infra/file-tail';
import { usesLocalDocker } from '../model/harbor/config';
import { stopOnlyWaits } from '../model/harbor/docker-signals';
import type { TaskAttempt } from './task-attempt';

/** Whether a container's compose project is one of this job's trials' (`<trial>__env`, `<trial>__verifier__…`). */
export function ofJobTrials(project: string, jobDir: string): boolean {
  return trialDirNames(jobDir).some((trial) => project.startsWith(composeProjectPrefix(trial)));
}

/** SIGKILL now to a container of the job whose stop signal its PID 1 drops; whether it was sent. */
export async function cutStopWait(s: ContainerSignal, jobDir: string, env: Record<string, string>): Promise<boolean> {
  if (s.signal === 9 || !ofJobTrials(s.project, jobDir)) return false;
  if (!stopOnlyWaits(await containerProcesses(s.id, env), s.signal)) return false;
  return killContainer(s.id, env);
}

/**
 * Cuts the stop waits of this task's trials while its harbor runs (Harbor on local Docker only), each noted in the
 * task's harbor log. Returns the function that stops watching (resolved once a stream it alone used has ended).
 */
export function cutStopWaits(t: TaskAttempt): () => Promise<void> {
  if (!usesLocalDocker(t.s.harbor.environment)) return async () => undefined;
  return onContainerSignals(t.env, (s) => {
    cutStopWait(s, t.jobDir, t.env).then(
      (cut) => {
        if (!cut) return;
        appendToLog(
          t.logFile,
          `# vero-harbor: SIGKILL to ${s.name || s.id} (project ${s.project}) at once: its PID 1 drops signal ${s.signal}, ` +
            "so Docker's stop could only wait its timeout and then send the same SIGKILL\n",
        );
      },
      (e: unknown) => t.ctx.log.warn("could not cut Docker's stop wait (Docker's own timeout applies)", { task: t.task, error: String(e) }),
    );
  });
}
