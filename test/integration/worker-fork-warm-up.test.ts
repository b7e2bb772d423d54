/**
 * The worker warms its harbor fork server as it starts (worker/harbor-warm-up.ts): for the default launcher
 * (`harbor` on the worker's PATH, here a stand-in package in a real virtualenv whose console script looks like
 * Harbor's own) and the environment of a run of the default settings, so the first run forks from it without
 * importing Harbor again (the server's own record says so). A warm-up that fails does not stop the worker, and the
 * first run then starts the server as it would without a warm-up.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { forkHarbor, forkServerRecords, forkServerSocketsOf } from '../../harbor/forkserver';
import { harborEnv } from '../../harbor/process-env';
import type { EvalSettings } from '../../model/evaluation/input';
import { HarborSection } from '../../model/harbor/config';
import { runInGroup } from '../../infra/process-group';
import { createVeroWorker } from '../../worker/create-worker';
import { tempDir } from '../helpers/fixtures';
import { fakeHarborVenv, installFakeHarbor, sitePackages } from '../helpers/fake-harbor-venv';
import { address, quietRuntime, uniqueQueue, workflowBundle } from '../helpers/temporal';

jest.setTimeout(120_000);

const FAKE_HARBOR = `
import json, os, sys

def app():
    print(json.dumps({"argv0": sys.argv[0], "pid": os.getpid()}))
    sys.exit(int(sys.argv[2]))
`;

let work: string;
const pathBefore = process.env.PATH;

beforeAll(() => {
  work = tempDir('vero-fork-warm-');
  fs.mkdirSync(path.join(work, 'cwd'));
});

afterEach(() => {
  process.env.PATH = pathBefore;
});

/** A virtualenv whose `bin/harbor` is what pip writes for Harbor's entry point; with the package, or without it. */
const venvWithHarbor = (name: string, withPackage: boolean): string =>
  fakeHarborVenv(path.join(work, name), withPackage ? FAKE_HARBOR : null).venv;

async function startWorker(more: { warmHarbor?: boolean } = {}): ReturnType<typeof createVeroWorker> {
  quietRuntime();
  return createVeroWorker({
    address: address(),
    namespace: 'default',
    taskQueue: uniqueQueue('fork-warm-up'),
    workflowBundle: await workflowBundle(),
    shutdownGraceTime: '1s',
    ...more,
  });
}

/** A task's harbor as the default settings start it (`harbor`, the default environment), through the fork server. */
async function runDefaultHarbor(log: string): Promise<{ exitCode: number | null; forked: boolean[] }> {
  const settings = { harbor: HarborSection.parse({ agent: 'oracle' }) } as EvalSettings;
  const forked: boolean[] = [];
  const r = await runInGroup(['harbor', 'report', '0'], {
    cwd: path.join(work, 'cwd'),
    env: harborEnv(settings, path.join(work, 'worktree'), '/jobs/t'),
    logFile: path.join(work, log),
    fork: forkHarbor,
    onStart: (_, f) => forked.push(f),
  });
  return { exitCode: r.exitCode, forked };
}

test("the worker's start leaves its fork server warm: the first run forks from it without importing Harbor again", async () => {
  const venv = venvWithHarbor('venv', true);
  process.env.PATH = `${path.join(venv, 'bin')}${path.delimiter}${pathBefore}`;
  const { worker, connection, forkServer } = await startWorker();
  try {
    await worker.runUntil(async () => {
      expect(await forkServer).toBe(true);
      const [warm, ...others] = await forkServerRecords();
      expect(others).toEqual([]);
      expect(warm).toEqual({ pid: expect.any(Number), forks: 0, imported: true });
      const run = await runDefaultHarbor('first.log');
      expect(run).toEqual({ exitCode: 0, forked: [true] });
      // The console script the worker's PATH finds, forked by the server the worker's start made.
      expect(JSON.parse(fs.readFileSync(path.join(work, 'first.log'), 'utf8').split('\n')[0]!)).toMatchObject({
        argv0: path.join(venv, 'bin', 'harbor'),
      });
      expect(await forkServerRecords()).toEqual([{ pid: warm!.pid, forks: 1, imported: true }]);
    });
  } finally {
    await connection.close();
  }
});

test('a warm-up that fails does not stop the worker; the first run then starts the fork server itself', async () => {
  const venv = venvWithHarbor('broken-venv', false); // its Python cannot import Harbor: the server cannot start
  process.env.PATH = `${path.join(venv, 'bin')}${path.delimiter}${pathBefore}`;
  const recordsBefore = (await forkServerRecords()).length;
  const { worker, connection, forkServer } = await startWorker();
  try {
    await worker.runUntil(async () => {
      expect(await forkServer).toBe(false);
      expect(worker.getState()).toBe('RUNNING');
      // Harbor is installed meanwhile: the failed warm-up is not held against the first run.
      installFakeHarbor(sitePackages(venv), FAKE_HARBOR);
      expect(await runDefaultHarbor('after-failed-warm-up.log')).toEqual({ exitCode: 0, forked: [true] });
      expect(await forkServerRecords()).toHaveLength(recordsBefore + 1);
    });
  } finally {
    await connection.close();
  }
});

test("a sidecar's worker (warmHarbor: false; its runs all have isolation, never forked) starts no fork server", async () => {
  const venv = venvWithHarbor('sidecar-venv', true);
  process.env.PATH = `${path.join(venv, 'bin')}${path.delimiter}${pathBefore}`;
  const recordsBefore = await forkServerRecords();
  const socketsBefore = forkServerSocketsOf(process.pid);
  const { worker, connection, forkServer } = await startWorker({ warmHarbor: false });
  try {
    await worker.runUntil(async () => {
      expect(await forkServer).toBe(false);
      // Had it warmed one, the server of this virtualenv's Python would have its record and socket dir by now.
      expect(await forkServerRecords()).toEqual(recordsBefore);
      expect(forkServerSocketsOf(process.pid)).toEqual(socketsBefore);
    });
  } finally {
    await connection.close();
  }
});
