/**
 * docker-compose.dev.yml brought up as a user brings it up (`docker compose up --build`, on this host's engine),
 * evaluating the example agent on real Harbor: the stack's two workers run the image's Harbor against the host's
 * engine through its socket, with the agent repo, dataset and home in VERO_SHARED_DIR at the same path. The
 * evaluation is started from the host's CLI against the stack's Temporal; Harbor alone scores the same tasks on
 * the host; the stack's Web UI is read in Chromium; one worker container dies mid-run (every process in it
 * SIGKILLed) and Docker restarts it: the trial its harbor was running is removed from the engine by vero, and after
 * `down -v` nothing of the test is left. Without an image registry the images the file names are the local
 * stand-ins of scripts/ensure-compose-images (made by provisioning, kept).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { stringify } from 'yaml';
import { uiLink } from '../../client/connection';
import { freePort } from '../../infra/dev-server';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import { launchChromium } from '../helpers/chromium';
import { agentRepo, DATASET, ROOT, tempDir } from '../helpers/fixtures';
import { runCommand, runVero, until } from '../helpers/process';
import { dockerObjects, harborBin, describeOrFail, realHarborUnavailable, trialObjects } from '../helpers/real-harbor';
import { completedTasks } from '../helpers/temporal';

const COMPOSE_FILE = path.join(ROOT, 'docker-compose.dev.yml');
/** The images the file and the Dockerfile name (scripts/ensure-compose-images provides them). */
const namedImages = (): string[] => [
  ...[...fs.readFileSync(COMPOSE_FILE, 'utf8').matchAll(/^\s+image: (\S+)$/gm)].map((m) => m[1]!),
  ...[...fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8').matchAll(/^FROM (\S+)/gm)].map((m) => m[1]!),
];
const unavailable =
  realHarborUnavailable() ??
  (namedImages().every((i) => dockerObjects().includes(`image ${i}`))
    ? null
    : 'the compose images are missing (run scripts/ensure-compose-images)');
const realDescribe = describeOrFail(unavailable);

jest.setTimeout(15 * 60_000);

/** The image's `vero` user (Dockerfile): the workers write the shared home as it. */
const WORKER_UID = 1001;
/** The Harbor the image installs (the Dockerfile's HARBOR_VERSION default). */
const IMAGE_HARBOR = '0.26.0';
const TASKS = ['hello-world', 'count-words'];

/** A dataset of two mini-bench tasks and a third whose verifier first waits: it runs when a worker dies. */
function writeDataset(dir: string): void {
  for (const t of TASKS) fs.cpSync(path.join(DATASET, t), path.join(dir, t), { recursive: true });
  const slow = path.join(dir, 'slow-hello');
  fs.cpSync(path.join(DATASET, 'hello-world'), slow, { recursive: true });
  const toml = path.join(slow, 'task.toml');
  fs.writeFileSync(toml, fs.readFileSync(toml, 'utf8').replace('mini-bench/hello-world', 'mini-bench/slow-hello'));
  const test = path.join(slow, 'tests', 'test.sh');
  fs.writeFileSync(test, fs.readFileSync(test, 'utf8').replace('\n', '\nsleep 45\n'));
}

/** A checkout of the candidate, for Harbor alone. */
function checkout(repo: string, candidate: string): string {
  const dir = tempDir('vero-compose-alone-');
  execFileSync('git', ['clone', '-q', repo, path.join(dir, 'agent')]);
  execFileSync('git', ['-C', path.join(dir, 'agent'), 'checkout', '-q', candidate]);
  return dir;
}

/** Harbor alone on the host: the same tasks, agent and candidate (its checkout in `dir`); reward per task name. */
async function harborAlone(dataset: string, dir: string): Promise<Record<string, number | null>> {
  const args = ['run', '-p', dataset, '-a', 'agent:SkillAgent', '-o', path.join(dir, 'jobs'), '--job-name', 'alone', '-y', '-q', '-n', '3'];
  const r = await runCommand(harborBin(IMAGE_HARBOR), args, { PYTHONPATH: path.join(dir, 'agent') });
  if (r.code !== 0) throw new Error(`harbor alone failed (${r.code}): ${r.stdout}${r.stderr}`);
  const jobDir = path.join(dir, 'jobs', 'alone');
  const rewards: Record<string, number | null> = {};
  for (const t of fs.readdirSync(jobDir).filter((e) => fs.statSync(path.join(jobDir, e)).isDirectory())) {
    const res = JSON.parse(fs.readFileSync(path.join(jobDir, t, 'result.json'), 'utf8')) as {
      task_name: string;
      verifier_result: { rewards?: { reward?: number } } | null;
    };
    rewards[res.task_name] = res.verifier_result?.rewards?.reward ?? null;
  }
  return rewards;
}

realDescribe('docker-compose.dev.yml on real Harbor', () => {
  const before = unavailable ? [] : dockerObjects();
  const project = `vero-compose-test-${path.basename(tempDir('p-')).slice(-6).toLowerCase()}`;
  const shared = unavailable ? '' : tempDir('vero-compose-shared-');
  const env: Record<string, string> = unavailable
    ? {}
    : { VERO_SHARED_DIR: shared, VERO_DOCKER_GID: String(fs.statSync('/var/run/docker.sock').gid) };
  const compose = (...args: string[]) => runCommand('docker', ['compose', '-p', project, '-f', COMPOSE_FILE, ...args], env);

  afterAll(async () => {
    if (unavailable) return;
    // The project's containers, networks and volumes, and the worker image it built; never the stand-ins.
    const down = await compose('down', '-v', '--rmi', 'local', '--timeout', '10');
    expect({ code: down.code, err: down.code === 0 ? '' : down.stderr }).toEqual({ code: 0, err: '' });
    expect(dockerObjects()).toEqual(before);
  });

  test('`up --build` evaluates on real Harbor from the host CLI: Harbor’s scores, the Web UI, a killed worker replaced, nothing finished re-run', async () => {
    fs.chmodSync(shared, 0o755);
    const repo = agentRepo(shared);
    const dataset = path.join(shared, 'dataset');
    writeDataset(dataset);
    const [temporalPort, uiPort] = [await freePort(), await freePort()];
    const address = `127.0.0.1:${temporalPort}`;
    const configFile = path.join(shared, 'vero.yaml');
    fs.writeFileSync(
      configFile,
      stringify({
        agent_repo: repo,
        tasks: { source: { path: dataset } },
        harbor: { agent: 'agent:SkillAgent' },
        execution: { concurrency: 3, task_attempts: 1, heartbeat_timeout: '5s', task_timeout: '5m' },
        temporal: { address },
        home: path.join(shared, 'home'),
      }),
    );
    const aloneDir = checkout(repo, 'baseline');
    // The workers write the home (made here first: the host's CLI would make it its own).
    fs.mkdirSync(path.join(shared, 'home'));
    execFileSync('chown', ['-R', `${WORKER_UID}:${WORKER_UID}`, shared]);
    Object.assign(env, { VERO_TEMPORAL_PORT: String(temporalPort), VERO_UI_PORT: String(uiPort) });

    // The stack comes up while Harbor alone scores the same tasks on the host.
    const alone = harborAlone(dataset, aloneDir);
    const up = await compose('up', '--build', '-d');
    expect({ code: up.code, err: up.code === 0 ? '' : up.stderr.slice(-3000) }).toEqual({ code: 0, err: '' });

    // The host's git reads the repo the workers own.
    const gitSafe = { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.directory', GIT_CONFIG_VALUE_0: '*' };
    const started = await runVero(['start-eval', '-c', configFile, '--candidate', 'baseline', '--json'], gitSafe);
    expect({ code: started.code, err: started.code === 0 ? '' : started.stderr }).toEqual({ code: 0, err: '' });
    const { evalId } = JSON.parse(started.stdout) as { evalId: string };
    const connection = await Connection.connect({ address });
    const client = new Client({ connection, namespace: 'default' });
    try {
      const { victim, killedTrials } = await killWorkerRunningSlowTask(client, evalId, project, shared);
      await until('the killed worker container restarted', async () => {
        const [count, running] = execFileSync('docker', ['inspect', '-f', '{{.RestartCount}} {{.State.Running}}', victim], {
          encoding: 'utf8',
        })
          .trim()
          .split(' ');
        return Number(count) >= 1 && running === 'true';
      });

      const result = (await client.workflow.getHandle(evalId).result()) as CandidateResult;
      const byName = Object.fromEntries((result.tasks ?? []).map((t) => [t.taskName, t.score]));
      expect(byName).toEqual(await alone);
      expect(Object.keys(byName).sort()).toEqual(['mini-bench/count-words', 'mini-bench/hello-world', 'mini-bench/slow-hello']);
      expect(result.harborVersions).toEqual([IMAGE_HARBOR]);

      // Nothing finished ran again: each quick task's runTask completed once, and its harbor started once.
      const done = await completedTasks(client, evalId);
      expect(done.filter((t) => TASKS.includes(t)).sort()).toEqual([...TASKS].sort());
      expect(harborStarts(path.join(shared, 'home', 'runs', evalId))).toMatchObject({ 'hello-world': 1, 'count-words': 1 });

      // Nothing of the evaluation's trials is left on the engine, not even the trial whose harbor died with the
      // container (nobody was left to tear it down): vero removed it, by the task's next attempt when it ran on
      // the restarted worker, or by that worker's orphan reaper when the attempt ran on the other one (which
      // cannot tell whether a harbor of another host still runs: harbor/trial-leftovers.ts). The reaper looks
      // as its worker starts, long before the slow task's second run ends; the wait is for a loaded machine.
      const runs = path.join(shared, 'home', 'runs', evalId);
      const allTrials = execFileSync('find', [runs, '-mindepth', '4', '-maxdepth', '4', '-type', 'd'], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map((p) => path.basename(p));
      const leftOf = () => trialObjects([...allTrials, ...killedTrials]);
      await until('no trial of the evaluation left on the engine', async () => leftOf().length === 0, 60_000).catch(() => undefined);
      expect(leftOf()).toEqual([]);

      await expectShownInWebUi(`http://127.0.0.1:${uiPort}`, evalId);
    } catch (e) {
      const logs = await compose('logs', '--no-color', '--tail', '40', 'worker');
      throw new Error(`${String(e)}\nthe workers' logs:\n${logs.stdout.slice(-6000)}`);
    } finally {
      await connection.close();
    }
  });
});

/** Waits until both quick tasks are done while the slow one's trial runs, then kills the worker running it. */
async function killWorkerRunningSlowTask(
  client: Client,
  evalId: string,
  project: string,
  shared: string,
): Promise<{ victim: string; killedTrials: string[] }> {
  const runs = path.join(shared, 'home', 'runs', evalId);
  const { host, trials } = await until(
    'both quick tasks done while the slow trial runs',
    async () => {
      const done = await completedTasks(client, evalId);
      if (!TASKS.every((t) => done.includes(t))) return undefined;
      const trials = execFileSync('find', [runs, '-mindepth', '4', '-maxdepth', '4', '-type', 'd', '-name', 'slow-hello__*'], {
        encoding: 'utf8',
      })
        .split('\n')
        .filter(Boolean)
        .map((p) => path.basename(p));
      if (!trialObjects(trials).some((o) => o.startsWith('container '))) return undefined;
      const desc = await client.workflow.getHandle(`${evalId}/chunk-0`).describe();
      const identity = desc.raw.pendingActivities?.[0]?.lastWorkerIdentity;
      return identity ? { host: identity.split('@')[1]!.split('#')[0]!, trials } : undefined;
    },
    300_000,
  );
  const workers = execFileSync(
    'docker',
    [
      'ps',
      '-q',
      '--no-trunc',
      '--filter',
      `label=com.docker.compose.project=${project}`,
      '--filter',
      'label=com.docker.compose.service=worker',
    ],
    { encoding: 'utf8' },
  )
    .split('\n')
    .filter(Boolean);
  expect(workers).toHaveLength(2);
  const victim = workers.find((id) => id.startsWith(host));
  if (!victim) throw new Error(`no worker container is the host ${host} (${workers.join(', ')})`);
  // Every process of the container but its init, SIGKILLed: tini exits with them, the container dies (137).
  execFileSync('docker', ['exec', victim, 'sh', '-c', 'kill -KILL -1']);
  return { victim, killedTrials: trials };
}

/** `# vero-harbor attempt` lines per task in the evaluation's harbor logs: how often harbor started for it. */
function harborStarts(evalRuns: string): Record<string, number> {
  return Object.fromEntries(
    execFileSync('find', [evalRuns, '-path', '*/jobs/*.harbor.log'], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map((l) => [path.basename(l, '.harbor.log'), (fs.readFileSync(l, 'utf8').match(/^# vero-harbor attempt /gm) ?? []).length]),
  );
}

/** The stack's Web UI shows the evaluation's page, completed. */
async function expectShownInWebUi(uiUrl: string, evalId: string): Promise<void> {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(uiLink(uiUrl, 'default', evalId)!);
    await page.getByText(evalId).first().waitFor();
    await page.getByText('Completed', { exact: true }).first().waitFor();
  } finally {
    await browser.close();
  }
}
