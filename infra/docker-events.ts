/**
 * The signals Docker sends to compose-labelled containers, as they are sent: one `docker events` process per set of
 * DOCKER_* settings while anyone listens, shared by every listener of this process, ended when the last one stops
 * listening. A stream that ends (the engine restarted, say) is started again by the next listener; the listeners it
 * had hear nothing more, and their trials' stops wait Docker's timeout as they would without vero.
 */
import * as readline from 'node:readline';
import { z } from 'zod';
import { containerSignalEvents } from './docker';

/** A signal Docker sent to a container: the container's id, its compose project, service and name, the signal's number. */
export interface ContainerSignal {
  id: string;
  project: string;
  service: string;
  name: string;
  signal: number;
}

const KillEvent = z.object({
  Action: z.literal('kill'),
  Actor: z.object({
    ID: z.string().min(1),
    Attributes: z.object({
      'com.docker.compose.project': z.string(),
      'com.docker.compose.service': z.string().default(''),
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
  return {
    id: e.data.Actor.ID,
    project: a['com.docker.compose.project'],
    service: a['com.docker.compose.service'],
    name: a.name,
    signal: Number(a.signal),
  };
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

/** How long a stopped stream is given to end before its processes are killed, and again after. */
const STOP_WAIT_MS = 2_000;

/** Whether `p` settled within `ms`. */
async function settledWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const settled = p.then(
    () => true,
    () => true,
  );
  const within = await Promise.race([settled, late]);
  clearTimeout(timer);
  return within;
}

function startStream(key: string, env: Record<string, string>): SharedStream {
  const events = containerSignalEvents(env, Date.now());
  const shared: SharedStream = {
    stop: async () => {
      events.stop();
      if (await settledWithin(events.ended, STOP_WAIT_MS)) return;
      events.kill();
      await settledWithin(events.ended, STOP_WAIT_MS);
    },
    listeners: new Set(),
  };
  readline.createInterface({ input: events.lines }).on('line', (line) => {
    const signal = parseContainerSignal(line);
    if (signal) for (const listen of shared.listeners) listen(signal);
  });
  // Ended (its output closed): the next listener starts a new stream.
  const ended = () => {
    if (streams.get(key) === shared) streams.delete(key);
  };
  events.lines.on('close', ended);
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
