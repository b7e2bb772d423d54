/**
 * The signals Docker sends to compose-labelled containers, as they are sent: one `docker events` process per set of
 * DOCKER_* settings while anyone listens, shared by every listener of this process, ended when the last one stops
 * listening. A stream that ends (the engine restarted, say) is started again by the next listener; until then its
 * listeners hear nothing, and their trials' stops wait Docker's timeout as they would without vero.
 */
import * as readline from 'node:readline';
import { z } from 'zod';
import { containerSignalEvents } from './docker';

/** A signal Docker sent to a container: the container's id, its compose project and name, the signal's number. */
export interface ContainerSignal {
  id: string;
  project: string;
  name: string;
  signal: number;
}

const KillEvent = z.object({
  Action: z.literal('kill'),
  Actor: z.object({
    ID: z.string().min(1),
    Attributes: z.object({
      'com.docker.compose.project': z.string(),
      name: z.string().default(''),
      signal: z.string().regex(/^\d+$/),
    }),
  }),
});

/** A line of `docker events --format '{{json .}}'` as a container signal; null for anything else. */
export function parseContainerSignal(line: string): ContainerSignal | null {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return null;
  }
  const e = KillEvent.safeParse(json);
  if (!e.success) return null;
  const a = e.data.Actor.Attributes;
  return { id: e.data.Actor.ID, project: a['com.docker.compose.project'], name: a.name, signal: Number(a.signal) };
}

type Listener = (s: ContainerSignal) => void;

interface SharedStream {
  /** Ends the stream: resolved once its process has ended. */
  stop: () => Promise<void>;
  listeners: Set<Listener>;
}

const streams = new Map<string, SharedStream>();

/** The Docker settings that choose an engine: one stream per distinct set. */
function engineKey(env: Record<string, string>): string {
  return JSON.stringify(
    Object.entries({ ...process.env, ...env })
      .filter(([k]) => k.startsWith('DOCKER_'))
      .sort(),
  );
}

/** How long a stopped stream's shell is given to end `docker events` and itself before it is killed. */
const STOP_WAIT_MS = 2_000;

function startStream(key: string, env: Record<string, string>): SharedStream {
  const events = containerSignalEvents(env, Date.now());
  const shared: SharedStream = {
    stop: async () => {
      events.stop();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), STOP_WAIT_MS)));
      if ((await Promise.race([events.ended, late])) === 'late') events.kill();
      clearTimeout(timer);
      await events.ended;
    },
    listeners: new Set(),
  };
  readline.createInterface({ input: events.lines }).on('line', (line) => {
    const signal = parseContainerSignal(line);
    if (signal) for (const listen of shared.listeners) listen(signal);
  });
  const ended = () => {
    if (streams.get(key) === shared) streams.delete(key);
  };
  events.ended.then(ended, ended);
  return shared;
}

/**
 * Calls `listen` with each signal Docker (of these settings) sends to a compose-labelled container from now on.
 * Returns the stop, resolved once the stream's process has ended (within STOP_WAIT_MS, else killed) when this was
 * its last listener.
 */
export function onContainerSignals(env: Record<string, string>, listen: Listener): () => Promise<void> {
  const key = engineKey(env);
  let shared = streams.get(key);
  if (!shared) {
    shared = startStream(key, env);
    streams.set(key, shared);
  }
  const mine = shared;
  mine.listeners.add(listen);
  return async () => {
    mine.listeners.delete(listen);
    if (mine.listeners.size > 0) return;
    if (streams.get(key) === mine) streams.delete(key);
    await mine.stop();
  };
}
