/**
 * Ctrl-C for the commands that start servers and workers (`vero dev`, `vero demo`): installed before anything
 * starts (the SDK's own signal handling is off for them: installCliRuntimeLogger({ ownSignals: true })), so a
 * Ctrl-C during start-up is never swallowed. The first Ctrl-C stops what started, newest first, then exits
 * (what is still starting is stopped as soon as it is up); a second one kills what is left at once (the
 * Temporal server's process group included) and exits: nothing is orphaned.
 */
export interface Interrupts {
  /**
   * Starts something (`make`) and registers how to stop it (`stop`) and kill it (`kill`, for a second Ctrl-C;
   * `onKill` lets `make` name it before it is up). After a Ctrl-C, what comes up is stopped at once.
   */
  start<T>(make: (onKill: (kill: () => void) => void) => Promise<T>, stop: (t: T) => Promise<void>): Promise<T>;
  /** Stops everything started (a normal end), newest first. */
  stopAll(): Promise<void>;
}

/** `exitCode`: the exit code after a Ctrl-C (asked when it comes). */
export function handleInterrupts(exitCode: number | (() => number) = 130): Interrupts {
  const running: (() => Promise<void>)[] = [];
  const kills = new Set<() => void>();
  let signals = 0;
  let starting = 0;
  const stopAll = async () => {
    for (const stop of running.splice(0).reverse()) await stop().catch(() => undefined);
  };
  const code = () => (typeof exitCode === 'function' ? exitCode() : exitCode);
  const finish = () => void stopAll().then(() => starting === 0 && process.exit(code()));
  const handler = () => {
    signals += 1;
    if (signals === 1) {
      process.stderr.write('\nstopping… (Ctrl-C again to kill at once)\n');
      quietSdkWarnings();
      finish();
      return;
    }
    process.stderr.write('killing what is left\n');
    for (const k of kills) {
      try {
        k();
      } catch {
        /* gone */
      }
    }
    process.exit(code());
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    async start(make, stop) {
      starting += 1;
      const named: (() => void)[] = [];
      let t: Awaited<ReturnType<typeof make>>;
      try {
        t = await make((kill) => {
          named.push(kill);
          kills.add(kill);
        });
      } catch (e) {
        starting -= 1;
        if (signals > 0) return finishAfterInterrupt();
        throw e;
      }
      starting -= 1;
      running.push(() => stop(t));
      if (signals > 0) return finishAfterInterrupt();
      return t;
    },
    stopAll,
  };
  /** Something finished starting after a Ctrl-C: stop everything (it too), exit, and never return. */
  function finishAfterInterrupt(): Promise<never> {
    finish();
    return new Promise<never>(() => undefined);
  }
}

/** Kills a detached child's whole process group (the Temporal dev server and its children). */
export const killGroup = (pid: number) => () => process.kill(-pid, 'SIGKILL');

/** A log line of the Temporal SDK below ERROR: `<time> [WARN] …` (its default format) or its JSON form. */
const SDK_BELOW_ERROR = /^(\S+ \[(WARN|INFO|DEBUG|TRACE)\] |\{"time":"[^"]*","level":"(WARN|INFO|DEBUG|TRACE)")/;

/**
 * After a Ctrl-C, what the SDK says about what is being stopped — connections to the server being stopped
 * "retried N times", activities cancelled mid-start with their stacks — is noise, not news: those lines (each
 * with its stack, written at once) are dropped; errors and vero's own lines stay.
 */
function quietSdkWarnings(): void {
  const write = process.stderr.write.bind(process.stderr) as (...args: unknown[]) => boolean;
  process.stderr.write = ((chunk: unknown, ...rest: unknown[]) =>
    typeof chunk === 'string' && SDK_BELOW_ERROR.test(chunk) ? true : write(chunk, ...rest)) as typeof process.stderr.write;
}
