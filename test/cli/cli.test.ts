/** The `vero` CLI as a user runs it: real processes, exit codes, messages, JSON. */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { freePort } from '../../infra/dev-server';
import { evalFixture, ROOT, tempDir } from '../helpers/fixtures';
import { chromium } from '../helpers/chromium';
import { queueCapacity } from '../../client/worker-capacity';
import { runCommand, runVero, spawnWorker, until, type WorkerProcess } from '../helpers/process';
import { address, cancelAndSettle, client, uniqueQueue, withWorker } from '../helpers/temporal';

jest.setTimeout(120_000);
const VERO = path.join(ROOT, 'bin', 'vero');

function vero(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(VERO, args, { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

// Each of these runs the CLI a few times and waits on nothing else: they run side by side (test.concurrent; jest's
// maxConcurrency bounds how many at once), with each test's invocations run together too.
describe('bad input: one clear error, a meaningful exit code, nothing started', () => {
  const f = evalFixture({ taskQueue: 'unused', address: address() });
  const variant = (mutate: (yaml: string) => string) => {
    const file = path.join(tempDir(), 'vero.yaml');
    fs.writeFileSync(file, mutate(fs.readFileSync(f.configFile, 'utf8')));
    return file;
  };
  test.concurrent.each([
    ['an unknown key', (y: string) => `${y}\nscoring2: {}\n`, /vero\.yaml: scoring2: unknown key/],
    [
      'a wrong type',
      (y: string) => y.replace(/concurrency: 3/, 'concurrency: three'),
      /execution\.concurrency: Invalid input: expected number, received string/,
    ],
    ['malformed YAML', (y: string) => `${y}\n  bad: [\n`, /not valid YAML/],
    [
      'a colliding extra arg',
      (y: string) => y.replace('harbor:\n', 'harbor:\n  extra_args: ["--jobs-dir=/x"]\n'),
      /harbor\.extra_args: --jobs-dir is set by vero-harbor/,
    ],
    [
      'a missing agent repo',
      (y: string) => y.replace(/agent_repo: .*/, 'agent_repo: /nonexistent/repo'),
      /agent_repo: \/nonexistent\/repo does not exist or is not a git repository/,
    ],
    [
      'an unknown task name',
      (y: string) => y.replace(/tasks:\n/, 'tasks:\n  names: [no-such-task]\n'),
      /tasks: unknown task name\(s\) no-such-task/,
    ],
    [
      'a task source that is a file',
      (y: string) => y.replace(/path: .*mini-bench/, `path: ${path.join(ROOT, 'README.md')}`),
      /tasks\.source\.path: .*README\.md is a file; expected a task dir or a dataset dir/,
    ],
    ['a blank harbor command', (y: string) => y.replace(/command:\n\s+- .*\n/, "command: '   '\n"), /harbor\.command: expected a command/],
    ['a home under /proc', (y: string) => y.replace(/home: .*/, 'home: /proc/vero-home'), /home: \/proc\/vero-home is under \/proc/],
    [
      'a task timeout past Node timers',
      (y: string) => y.replace(/task_timeout: .*/, 'task_timeout: 600h'),
      /execution\.task_timeout: expected at most 500h/,
    ],
  ])('%s → exit 2', async (_what, mutate, message) => {
    const r = await runVero(['start-eval', '-c', variant(mutate), '--candidate', 'improved']);
    expect(r.stderr).toMatch(message);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
  });

  test.concurrent('every problem of a config at once, one line each; a bad flag is blamed on the flag, not on the file', async () => {
    const file = variant(
      (y) => y.replace(/concurrency: 3/, 'concurrency: 0').replace(/task_timeout: .*/, 'task_timeout: soon') + '\nscoring2: {}\n',
    );
    const [r, flagged] = await Promise.all([
      runVero(['start-eval', '-c', file, '--candidate', 'improved']),
      runVero(['start-eval', '-c', f.configFile, '--candidate', 'improved', '--concurrency', '0', '--n-attempts', '0']),
    ]);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        `error: ${file}: scoring2: unknown key (did you mean scoring?)`,
        expect.stringMatching(new RegExp(`^error: ${file}: execution\\.concurrency: Too small`)),
        expect.stringMatching(new RegExp(`^error: ${file}: execution\\.task_timeout: .*expected a duration`)),
      ]),
    );
    expect(lines.filter((l) => l.startsWith('error: '))).toHaveLength(3);
    expect(flagged.code).toBe(2);
    expect(flagged.stderr).toContain('error: --concurrency: Too small: expected number to be >=1 (execution.concurrency)');
    expect(flagged.stderr).toContain('error: --n-attempts: Too small: expected number to be >=1 (harbor.n_attempts)');
    expect(flagged.stderr).not.toContain(f.configFile);
  });

  test.concurrent('a bad candidate → exit 2 naming the ref and repo', async () => {
    const r = await runVero(['start-eval', '-c', f.configFile, '--candidate', 'deadbeef']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`error: --candidate: "deadbeef" is not a commit of ${f.repo}\n`);
  });

  test.concurrent('an unreachable Temporal server → exit 3', async () => {
    const r = await runVero(['start-eval', '-c', f.configFile, '--candidate', 'improved', '--address', '127.0.0.1:1']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/cannot reach the Temporal server at 127\.0\.0\.1:1 .*vero dev/);
  });

  test.concurrent('a config that is not a regular file, or too large, is refused at once → exit 2', async () => {
    const fifo = path.join(tempDir(), 'vero.yaml');
    spawnSync('mkfifo', [fifo]);
    const big = path.join(tempDir(), 'vero.yaml');
    fs.writeFileSync(big, `# ${'x'.repeat(2 * 1024 * 1024)}\n`);
    const cases = [
      [fifo, /a FIFO, not a regular file/],
      ['/dev/zero', /a character device, not a regular file/],
    ] as const;
    const [fromBig, ...answers] = await Promise.all(
      [big, ...cases.map(([file]) => file)].map((file) => runVero(['start-eval', '-c', file, '--candidate', 'improved'])),
    );
    for (const [i, [, why]] of cases.entries()) {
      expect(answers[i]!.code).toBe(2);
      expect(answers[i]!.stderr).toMatch(why);
    }
    expect(fromBig!.stderr).toMatch(/over the 1048576-byte limit/);
  });

  test.concurrent('ids nobody knows → exit 2; a worker that cannot reach its server → exit 3; neither prints a stack', async () => {
    const cmds = ['status', 'results', 'cancel'];
    const [w, ...answers] = await Promise.all([
      runVero(['worker', '--address', '127.0.0.1:1']),
      // Well formed (cancel refuses what is not an evaluation id before asking), but no such evaluation.
      ...cmds.map((cmd) => runVero([cmd, `eval-${'0'.repeat(40)}-${'0'.repeat(16)}`, '--address', address()])),
    ]);
    for (const [i, cmd] of cmds.entries()) {
      const r = answers[i]!;
      expect({ cmd, code: r.code }).toEqual({ cmd, code: 2 });
      expect(r.stderr).toMatch(/no such evaluation/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    expect(w.code).toBe(3);
    expect(w.stderr).toMatch(/is the Temporal server running/);
    expect(w.stderr).not.toMatch(/\n\s+at /);
  });

  test.concurrent('unknown options and --help', async () => {
    // A reader that stops early (`| head`) is not an error: no EPIPE stack, exit 0.
    const [bogus, help, startHelp, piped] = await Promise.all([
      runVero(['start-eval', '--bogus']),
      runVero(['--help']),
      runVero(['start-eval', '--help']),
      runCommand('bash', ['-c', `'${VERO}' --help | head -1; echo "exit \${PIPESTATUS[0]}"`]),
    ]);
    expect(bogus.code).toBe(2);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('start-eval');
    expect(help.stdout).toContain('Exit codes');
    expect(startHelp.stdout).toContain('--candidate <ref>');
    expect(piped.stdout).toBe('Usage: vero [options] [command]\nexit 0\n');
    expect(piped.stderr).toBe('');
  });

  test.concurrent(
    'start-eval --print-config prints what would run (id, digest, settings, the resolved config) and starts nothing',
    async () => {
      // No server is needed (and none is at this address): nothing is started.
      const r = await runVero([
        'start-eval',
        '-c',
        f.configFile,
        '--candidate',
        'improved',
        '--concurrency',
        '7',
        '--print-config',
        '--address',
        '127.0.0.1:1',
      ]);
      expect(r.code).toBe(0);
      const out = JSON.parse(r.stdout) as {
        evalId: string;
        configDigest: string;
        tasks: string[];
        settings: { concurrency: number };
        config: { execution: { concurrency: number } };
      };
      expect(out.evalId).toMatch(new RegExp(`^eval-[0-9a-f]{40}-${out.configDigest.slice(0, 16)}`));
      expect(out.tasks).toHaveLength(6);
      expect(out.settings.concurrency).toBe(7);
      expect(out.config.execution.concurrency).toBe(7);
    },
  );
});

test('start-eval --wait --json prints the result; trials --json collates its jobs dir offline', async () => {
  const q = uniqueQueue('cli');
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    tasks: { names: ['hello-world', 'fix-csv-parser'] },
    harbor: { n_attempts: 2 },
  });
  const out = await withWorker(q, async () => {
    const child = spawn(VERO, ['start-eval', '-c', f.configFile, '--candidate', 'improved', '--wait', '--json'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    return { code, stdout };
  });
  expect(out.code).toBe(0);
  const result = JSON.parse(out.stdout) as { score: number; tasks: { task: string; jobDir: string }[]; status: string; ui: string | null };
  expect(result).toMatchObject({ status: 'completed', nScored: 2 });
  expect(result.score).toBeCloseTo(0.75);
  const jobsDir = path.dirname(result.tasks[0]!.jobDir);
  const trials = vero(['trials', jobsDir, '--json']);
  expect(trials.code).toBe(0);
  const noUsage = { costUsd: null, inputTokens: null, outputTokens: null, cacheTokens: null };
  expect(JSON.parse(trials.stdout)).toEqual({
    tasks: [
      {
        task: 'fix-csv-parser',
        taskName: 'mini-bench/fix-csv-parser',
        status: 'scored',
        score: 0.5,
        trial: expect.stringMatching(/^fix-csv-parser__/),
        metrics: { reward: 0.5 },
        nTrials: 2,
        exceptions: [],
        error: null,
        usage: noUsage,
        trialRewards: [0.5, 0.5],
        jobDir: path.join(jobsDir, 'fix-csv-parser'),
      },
      {
        task: 'hello-world',
        taskName: 'mini-bench/hello-world',
        status: 'scored',
        score: 1,
        trial: expect.stringMatching(/^hello-world__/),
        metrics: { reward: 1 },
        nTrials: 2,
        exceptions: [],
        error: null,
        usage: noUsage,
        trialRewards: [1, 1],
        jobDir: path.join(jobsDir, 'hello-world'),
      },
    ],
  });
  const mean = JSON.parse(vero(['trials', jobsDir, '--json', '--aggregate', 'mean']).stdout) as {
    tasks: { metrics: Record<string, number> }[];
  };
  expect(mean.tasks[0]!.metrics).toEqual({ reward_mean: 0.5, n_attempts: 2, n_scored: 2, n_clean: 2 });
  // Threads read and score chunks of whole tasks; the rows (and each row's job dir) do not depend on how many.
  expect(vero(['trials', jobsDir, '--json', '--threads', '3']).stdout).toBe(trials.stdout);
  expect(vero(['trials', jobsDir, '--threads', '0']).code).toBe(2);
  expect(vero(['trials', '/nonexistent']).code).toBe(2);
});

test('vero dev serves the Web UI, stops on Ctrl-C, and its SQLite file keeps evaluations across restarts', async () => {
  const dir = tempDir();
  const db = path.join(dir, 'temporal.db');
  const port = await freePort();
  const uiPort = await freePort();
  // Whatever this test started is stopped at its end, whichever expectation failed first.
  const running = new Set<ReturnType<typeof spawn>>();
  const start = async (...flags: string[]) => {
    const child = spawn(
      VERO,
      ['dev', '--db', db, '--port', String(port), '--ui-port', String(uiPort), '--task-queue', 'dev-test', ...flags],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    running.add(child);
    child.on('exit', () => running.delete(child));
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await until('vero dev to start its worker', async () => out.includes('worker polling'));
    expect(out).toContain(`Web UI: http://127.0.0.1:${uiPort}`);
    return child;
  };
  const stop = async (child: ReturnType<typeof spawn>) => {
    const exited = new Promise<number | null>((r) => child.on('exit', r));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  };
  try {
    const first = await start();
    const page = await fetch(`http://127.0.0.1:${uiPort}/`);
    expect(page.status).toBe(200);
    const repo = evalFixture({ taskQueue: 'dev-test', address: `127.0.0.1:${port}`, tasks: { names: ['hello-world'] } });
    const run = vero(['start-eval', '-c', repo.configFile, '--candidate', 'baseline', '--wait', '--json']);
    expect(run.code).toBe(0);
    const { evalId, candidate } = JSON.parse(run.stdout) as { evalId: string; candidate: string };
    // As a person would: the Web UI, in headless Chromium, finds the evaluation by its candidate (loaded again, as a
    // person would reload, when a loaded machine renders the list after Chromium's budget or visibility lags).
    const query = encodeURIComponent(`VeroCandidate="${candidate}"`);
    const listing = `http://127.0.0.1:${uiPort}/namespaces/default/workflows?query=${query}`;
    let dom = '';
    for (let load = 1; load <= 4 && !dom.includes(evalId); load++) dom = chromium(['--virtual-time-budget=20000', '--dump-dom', listing]);
    expect(dom).toContain(evalId);
    // The file is in WAL mode (its header's read and write versions are 2; a rollback journal's are 1).
    const header = fs.readFileSync(db).subarray(18, 20);
    expect([...header]).toEqual([2, 2]);
    await stop(first);

    // Reopened with every commit fsynced: the same file, the same evaluations.
    const second = await start('--db-sync', 'full');
    const listed = vero(['list', '--json', '--address', `127.0.0.1:${port}`]);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as { evalId: string; status: string }[]).find((r) => r.evalId === evalId)).toMatchObject({
      status: 'completed',
    });
    const again = vero(['start-eval', '-c', repo.configFile, '--candidate', 'baseline', '--json']);
    expect(JSON.parse(again.stdout)).toMatchObject({ evalId, mode: 'existing' });
    // A second `vero dev` on the same database is refused, naming the live owner (it used to stop its server);
    // one on the same port is refused too (it used to report success and join the other server). Each is
    // refused before it starts anything, so they run at once.
    const [sameDb, badSync, samePort] = await Promise.all([
      freePort().then((p) => runVero(['dev', '--db', db, '--port', String(p), '--no-worker'])),
      runVero(['dev', '--db', path.join(dir, 'other.db'), '--db-sync', 'sometimes', '--no-worker']),
      runVero(['dev', '--db', path.join(dir, 'other.db'), '--port', String(port), '--no-worker']),
    ]);
    expect(sameDb.code).toBe(2);
    expect(sameDb.stderr).toMatch(new RegExp(`in use by a running dev server \\(pid \\d+, port ${port}\\) of vero process ${second.pid}`));
    expect(badSync.code).toBe(2);
    expect(badSync.stderr).toContain("argument 'sometimes' is invalid. Allowed choices are normal, full");
    expect(samePort.code).toBe(2);
    expect(samePort.stderr).toContain(`port 127.0.0.1:${port} is already in use`);
    // The first is untouched: it still answers.
    expect((await runVero(['list', '--json', '--address', `127.0.0.1:${port}`])).code).toBe(0);
    await stop(second);
  } finally {
    for (const child of running) {
      const exited = new Promise((r) => child.on('exit', r));
      child.kill('SIGINT'); // vero dev stops its Temporal server on SIGINT
      await exited;
    }
  }
});

test('status, results, list and best read evaluations back; cancel stops a running one', async () => {
  const q = uniqueQueue('cli-read');
  const f = evalFixture({ taskQueue: q, address: address(), tasks: { names: ['hello-world', 'reverse-string'] } });
  const conn = ['--address', address()];
  await withWorker(q, async () => {
    const ids: Record<string, string> = {};
    const started = await Promise.all(
      ['baseline', 'improved'].map((candidate) =>
        runVero(['start-eval', '-c', f.configFile, '--candidate', candidate, '--wait', '--json']),
      ),
    );
    for (const [i, candidate] of ['baseline', 'improved'].entries()) {
      expect(started[i]!.code).toBe(0);
      ids[candidate] = (JSON.parse(started[i]!.stdout) as { evalId: string }).evalId;
    }
    // best waits for visibility to list both; the reads by id run beside it, all at once (what lists or finds
    // evaluations by candidate runs once best has seen both).
    const bestOfBoth = (async () => {
      let best: { code: number | null; stdout: string } = { code: null, stdout: '' };
      for (let i = 0; i < 30; i++) {
        best = await runVero(['best', '--json', '-c', f.configFile]);
        if (best.code === 0 && (JSON.parse(best.stdout) as { evalId: string }).evalId === ids.improved) break;
        await new Promise((r) => setTimeout(r, 300));
      }
      return best;
    })();
    const [results, table, status, cmpText, noSuch] = await Promise.all([
      runVero(['results', ids.improved!, '--json', ...conn]),
      runVero(['results', ids.baseline!, ...conn]),
      runVero(['status', ids.improved!, '--json', ...conn]),
      runVero(['compare', ids.baseline!, ids.improved!, ...conn]),
      runVero(['compare', 'eval-nope', ids.improved!, ...conn]),
    ]);
    expect(JSON.parse(results.stdout)).toMatchObject({
      score: 1,
      nScored: 2,
      tasks: [{ task: 'hello-world' }, { task: 'reverse-string' }],
    });
    expect(table.stdout).toMatch(/reverse-string\s+scored\s+0\.000/);
    expect(table.stdout).toContain('score     0.500 over 2 task(s)');
    // 1 of 2 tasks: mean 0.5, sample sd 0.707, standard error 0.5, t(0.975, 1) = 12.71: the interval is all of [0, 1].
    expect(table.stdout).toContain('          95% interval 0.000–1.000 (standard error 0.500, over tasks)');
    expect(JSON.parse(status.stdout)).toMatchObject({ workflowStatus: 'COMPLETED', progress: { phase: 'done', done: 2 } });
    const best = await bestOfBoth;
    const [bestText, cmp, limited, limitedText] = await Promise.all([
      runVero(['best', '-c', f.configFile, ...conn]),
      runVero(['compare', 'baseline', 'improved', '-c', f.configFile, '--json']),
      runVero(['list', '--limit', '1', '--json', ...conn]),
      runVero(['list', '--limit', '1', ...conn]),
    ]);
    expect(JSON.parse(best.stdout)).toMatchObject({ evalId: ids.improved, candidateRef: 'improved', score: 1 });
    // 2/2 against 1/2 on two tasks is not a resolved difference, and best says so.
    expect(JSON.parse(best.stdout)).toMatchObject({ runnerUp: { evalId: ids.baseline, separable: false }, uncertainty: { n: 2, mean: 1 } });
    expect(bestText.stdout).toContain('not separable from the runner-up baseline (0.500) at 95%');
    // What the ranking ranked by, said by best and compare (text and --json): the score, no constraints.
    const rankedBy = 'ranking   ranked by score (maximize, highest first: the mean over the tasks that ran';
    expect(bestText.stdout).toContain(rankedBy);
    expect(bestText.stdout).toContain('; ties: fewer errors, then the earlier start; no constraints\n');
    expect(cmpText.stdout).toContain(rankedBy);
    expect(JSON.parse(best.stdout).rankedBy).toMatchObject({ metric: 'score', direction: 'maximize', constraints: [] });
    expect(JSON.parse(cmp.stdout).rankedBy).toMatchObject({ metric: 'score', direction: 'maximize', constraints: [] });

    // list pages through every evaluation; --limit shows the newest N and says there are more.
    expect(JSON.parse(limited.stdout)).toHaveLength(1);
    expect(limitedText.stderr).toContain('showing the newest 1; there are more');
    // Human output names the server it read (never silently another one's state); --json stays clean.
    expect(limitedText.stderr).toContain(`server ${address()} (from --address) · namespace default`);
    expect(limited.stderr).not.toContain('namespace');
    // compare: by candidate under the config, and by evaluation id; 1 flip on 2 tasks is not resolved.
    expect(cmp.code).toBe(0);
    expect(JSON.parse(cmp.stdout)).toMatchObject({
      a: { evalId: ids.baseline },
      b: { evalId: ids.improved },
      n: 2,
      meanDelta: 0.5,
      flippedToPass: ['reverse-string'],
      flippedToFail: [],
      mcnemar: { aOnly: 0, bOnly: 1, pValue: 1 },
      verdict: 'not resolved',
    });
    expect(cmpText.stdout).toMatch(/reverse-string\s+0\.000\s+1\.000\s+\+1\.000/);
    expect(cmpText.stdout).toContain('verdict   not resolved at this sample size: mean delta +0.500 over 2 shared task(s)');
    expect(noSuch.code).toBe(2);
    expect(noSuch.stderr).toContain('A: no evaluation "eval-nope" on this server');

    // A hanging evaluation, cancelled from the CLI.
    const h = evalFixture({
      taskQueue: q,
      address: address(),
      tasks: { names: ['hello-world'] },
      scenario: { default: { process: 'hang' } },
    });
    // Ctrl-C on --wait stops the waiting only, and says how to follow or cancel the evaluation.
    const waiting = spawn(VERO, ['start-eval', '-c', h.configFile, '--candidate', 'improved', '--wait'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let waitErr = '';
    waiting.stderr.on('data', (d: Buffer) => (waitErr += d.toString()));
    const waitExit = new Promise<number | null>((r) => waiting.on('exit', (code) => r(code)));
    await until('harbor to start', async () => fs.existsSync(h.invocationLog));
    const hangId = /^(?:started|attached) (\S+)/m.exec(waitErr)![1]!;
    waiting.kill('SIGINT');
    expect(await waitExit).toBe(130);
    expect(waitErr).toContain(`stopped waiting; the evaluation goes on. Follow it: vero status ${hangId}`);
    expect(waitErr).toContain(`stop it: vero cancel ${hangId}`);
    expect(JSON.parse((await runVero(['status', hangId, ...conn, '--json'])).stdout)).toMatchObject({ workflowStatus: 'RUNNING' });
    // results of a running evaluation: the rows so far, marked partial, at once (not a wait for the end).
    const running = await runVero(['results', hangId, '--json', ...conn]);
    expect(running.code).toBe(0);
    expect(JSON.parse(running.stdout)).toMatchObject({
      partial: true,
      workflowStatus: 'RUNNING',
      nTasks: 1,
      nWithResults: 0,
      pending: ['hello-world'],
    });
    expect((await runVero(['cancel', hangId, ...conn])).stdout).toContain(`cancellation requested for ${hangId}`);
    await until(
      'the cancellation to finish',
      async () =>
        (JSON.parse((await runVero(['status', hangId, ...conn, '--json'])).stdout) as { workflowStatus: string }).workflowStatus ===
        'CANCELLED',
      30_000,
    );
    const after = await runVero(['results', hangId, ...conn]);
    expect(after.code).toBe(1);
    // The rows so far, marked partial: the stopped trial (harbor records its CancelledError), or none yet.
    const partialLine = /partial {3}(\d) of 1 task\(s\) have results so far; the evaluation is cancelled( \(1 pending\))?/.exec(
      after.stdout,
    );
    expect(partialLine).not.toBeNull();
    if (partialLine![1] === '1') expect(after.stdout).toMatch(/hello-world\s+error .*CancelledError/);
    else expect(partialLine![2]).toBe(' (1 pending)');
    expect(after.stderr).toMatch(/evaluation failed: .*cancel/i);
    // Its status says it is over: nothing shown as running.
    const closed = await runVero(['status', hangId, ...conn]);
    expect(closed.stdout).toMatch(/^eval-\S+: CANCELLED\ncancelled: 0\/1 done, 0 errors(, 1 stopped while running)?\n/);
    expect(closed.stdout).not.toMatch(/\d+ running/);
    const json = JSON.parse((await runVero(['status', hangId, ...conn, '--json'])).stdout) as { progress: { running: number } | null };
    if (json.progress) expect(json.progress.running).toBe(0);
  });
});

test('cancel of a finished evaluation says so; the same evaluation from another home points at the files', async () => {
  const q = uniqueQueue('cli-finished');
  const f = evalFixture({ taskQueue: q, address: address(), tasks: { names: ['hello-world'] } });
  await withWorker(q, async () => {
    const first = await runVero(['start-eval', '-c', f.configFile, '--candidate', 'improved', '--wait', '--json']);
    expect(first.code).toBe(0);
    const evalId = (JSON.parse(first.stdout) as { evalId: string }).evalId;
    const cancel = await runVero(['cancel', evalId, '--address', address()]);
    expect(cancel.code).toBe(0);
    expect(cancel.stdout).toBe(`${evalId} has already finished (COMPLETED); nothing to cancel\n`);
    // `home` is not part of the evaluation id: a config that differs only there gets the same evaluation,
    // and is told where its files are.
    const moved = path.join(tempDir(), 'vero.yaml');
    const otherHome = path.join(tempDir(), 'elsewhere');
    fs.writeFileSync(moved, fs.readFileSync(f.configFile, 'utf8').replace(/home: .*/, `home: ${otherHome}`));
    const again = await runVero(['start-eval', '-c', moved, '--candidate', 'improved']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^existing /);
    expect(again.stderr).toContain(`note: this evaluation was started with home ${f.home}; its files are there, not under ${otherHome}`);
  });
});

test('start-eval says when concurrency is more than the workers polling the queue can run', async () => {
  const q = uniqueQueue('capacity');
  const f = evalFixture({ taskQueue: q, address: address(), execution: { concurrency: 8 }, tasks: { names: ['hello-world'] } });
  const w = spawnWorker(address(), q, {}, ['--max-concurrent-tasks', '2']);
  try {
    await until('the worker polls', async () => (await queueCapacity(await client(), q)).workers === 1);
    expect(await queueCapacity(await client(), q)).toEqual({ workers: 1, slots: 2 });
    const r = await runVero(['start-eval', '-c', f.configFile, '--candidate', 'improved', '--wait']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      `note: concurrency 8, but the 1 worker(s) polling ${q} run at most 2 task(s) at once; start more workers or raise --max-concurrent-tasks`,
    );
  } finally {
    w.kill('SIGTERM');
  }
});

/**
 * One `vero worker` process, started by the first test that asks for its queue, serves the tests below that need a
 * worker process but nothing particular of it (each has its own fixture, home and evaluation ids). The tests that
 * inspect their worker (its slots, its log) start their own.
 */
let sharedWorker: WorkerProcess | undefined;
const sharedQueue = uniqueQueue('cli-worker');
function sharedWorkerQueue(): string {
  sharedWorker ??= spawnWorker(address(), sharedQueue, {});
  return sharedQueue;
}
afterAll(async () => {
  sharedWorker?.kill('SIGTERM');
  if (sharedWorker)
    await until('the shared worker stopped', async () => sharedWorker!.proc.exitCode !== null || sharedWorker!.proc.signalCode !== null);
});

test('start-eval --wait exits 2 when the evaluation fails for a config reason (the failure table), 1 otherwise', async () => {
  const q = sharedWorkerQueue();
  const f = evalFixture({ taskQueue: q, address: address(), tasks: { names: ['hello-world'] } });
  const r = await runVero([
    'start-eval',
    '-c',
    f.configFile,
    '--candidate',
    'improved',
    '--wait',
    '--harbor-command',
    '/nonexistent/harbor',
  ]);
  expect(r.stderr).toMatch(/evaluation failed: harbor launcher not found: "\/nonexistent\/harbor"/);
  expect(r.code).toBe(2);
});

test('a spend cap through the CLI: start-eval --wait exits 4 with budget_exhausted and not_run rows; spend-pool shows the batch', async () => {
  const q = sharedWorkerQueue();
  const pool = `cli-${q}`;
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    scenario: {
      tasks: { 'add-cli-flag': { reward: 1, cost_usd: 2, duration_ms: 200 } },
      default: { reward: 1, cost_usd: 0.5, duration_ms: 1500 },
    },
    execution: { concurrency: 1, max_cost_usd: 1, spend_pool: pool },
  });
  const human = await runVero(['start-eval', '-c', f.configFile, '--candidate', 'improved', '--wait']);
  expect(human.code).toBe(4);
  // concurrency 1: the first task's $2 is known before the next task may start, so nothing else starts
  expect(human.stdout).toMatch(
    new RegExp(`status +budget_exhausted \\(max_cost_usd \\$1\\.00 reached \\(\\$2\\.0000 spent in spend pool ${pool}\\); partial`),
  );
  expect(human.stdout).toMatch(/score +1\.000 over the 1 of 6 task\(s\) that ran \(5 not run\)/);
  expect(human.stdout).toMatch(/not_run .*not started: max_cost_usd/);
  const json = await runVero(['start-eval', '-c', f.configFile, '--candidate', 'improved', '--wait', '--json']);
  expect(json.code).toBe(4);
  const r = JSON.parse(json.stdout) as {
    status: string;
    nRun: number;
    nTasks: number;
    tasks: { status: string }[];
    spend: { nNotRun: number };
  };
  expect(r).toMatchObject({ status: 'budget_exhausted', nRun: 1, nTasks: 6, spend: { nNotRun: 5 } });
  expect(r.tasks.filter((t) => t.status === 'not_run')).toHaveLength(5);
  const shown = await runVero(['spend-pool', pool, '--address', address()]);
  expect(shown.code).toBe(0);
  expect(shown.stdout).toMatch(new RegExp(`spend pool ${pool}: max_cost_usd \\$1\\.00`));
  expect(shown.stdout).toMatch(/spent +\$2\.0000, 0 tokens/);
  expect(shown.stdout).toMatch(/cap reached: max_cost_usd \$1\.00 reached/);
  const missing = await runVero(['spend-pool', 'no-such-pool', '--address', address()]);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toMatch(/spend pool "no-such-pool": none on this server/);
});

test("quiet consoles: a task attempt that failed and is retried is one line in the worker's log, not the SDK's warning with a stack", async () => {
  const q = uniqueQueue('quiet');
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    tasks: { names: ['hello-world'] },
    scenario: { tasks: { 'hello-world': [{ exception: 'RuntimeError', message: 'sandbox died' }, { reward: 1 }] } },
  });
  const w = spawnWorker(address(), q, {});
  try {
    const r = await runVero(['start-eval', '-c', f.configFile, '--candidate', 'improved', '--wait', '--json']);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { tasks: { runs: number }[] }).tasks[0]!.runs).toBe(2);
  } finally {
    w.kill('SIGTERM');
  }
  await until('the worker stopped', async () => w.proc.exitCode !== null || w.proc.signalCode !== null);
  const log = fs.readFileSync(w.log, 'utf8');
  const about = log.split('\n').filter((l) => l.includes('hello-world') && /RuntimeError|sandbox died/.test(l));
  expect(about).toHaveLength(1);
  expect(about[0]).toMatch(/task "hello-world": .*\(attempt 1 of 3\); retrying/);
  expect(log).not.toContain('Activity failed');
  expect(log).not.toMatch(/^\s+at /m);
});

test('vero completion bash completes commands and each command’s own options, generated from the commands themselves', () => {
  const script = vero(['completion', 'bash']);
  expect(script.code).toBe(0);
  const complete = (words: string[]) =>
    spawnSync(
      'bash',
      [
        '-c',
        `eval "$1"; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _vero; printf '%s\\n' "\${COMPREPLY[@]}"`,
        '_',
        script.stdout,
      ],
      { encoding: 'utf8' },
    )
      .stdout.trim()
      .split('\n')
      .sort();
  expect(complete(['vero', 'st'])).toEqual(['start-eval', 'status']);
  expect(complete(['vero', 'start-eval', '--c'])).toEqual(['--candidate', '--concurrency', '--config']);
  expect(complete(['vero', 'set-concurrency', 'eval-x', '--j'])).toEqual(['--json']);
  expect(complete(['vero', 'view', '--p'])).toEqual(['--port']);
  expect(vero(['completion', 'fish']).stdout).toContain("complete -c vero -n '__fish_seen_subcommand_from start-eval' -l candidate -r");
  expect(vero(['completion', 'zsh']).stdout).toContain('bashcompinit');
  const bad = vero(['completion', 'tcsh']);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('<shell>: expected bash, zsh or fish, got "tcsh"');
});

test('vero clean lists by a retention rule and removes with --yes: old run dirs, results Temporal forgot, unused worktrees; never a running evaluation’s', async () => {
  const q = sharedWorkerQueue();
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    tasks: { names: ['hello-world'] },
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    scenario: { tasks: { 'hello-world': { reward: 1 } }, default: { reward: 1, duration_ms: 120_000 } },
  });
  // A candidate commit no other test evaluates: a worktree stays while any evaluation of its commit runs on the
  // server (whatever home it uses), and the example repo's commits are the same in every test.
  execFileSync('git', ['-C', f.repo, 'checkout', '-q', 'improved']);
  execFileSync('git', [
    '-C',
    f.repo,
    '-c',
    'user.name=t',
    '-c',
    'user.email=t@t',
    'commit',
    '-q',
    '--allow-empty',
    '-m',
    `clean test ${f.dir}`,
  ]);
  const own = execFileSync('git', ['-C', f.repo, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  let running: string | null = null;
  try {
    const done = JSON.parse((await runVero(['start-eval', '-c', f.configFile, '--candidate', own, '--wait', '--json'])).stdout) as {
      evalId: string;
      candidate: string;
      resultFile: string;
    };
    // Another evaluation, still running (its one task takes two minutes).
    const started = await runVero(['start-eval', '-c', f.configFile, '--candidate', 'baseline', '--tasks', 'count-words', '--json']);
    running = (JSON.parse(started.stdout) as { evalId: string }).evalId;
    await until('the running evaluation has a run dir', async () => fs.existsSync(path.join(f.home, 'runs', running!)));
    // What an evaluation Temporal no longer has left behind, two months ago, and an old worktree.
    const old = (Date.now() - 60 * 86_400_000) / 1000;
    const plant = (rel: string) => {
      const p = path.join(f.home, rel);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, 'x'.repeat(1000));
      for (let d = p; d !== f.home; d = path.dirname(d)) fs.utimesSync(d, old, old);
    };
    plant('runs/eval-gone/run1/jobs/a.harbor.log');
    plant('results/eval-gone.json');
    plant('results/eval-gone/samples/0.json');
    plant(`worktrees/${'f'.repeat(40)}/agent.py`);
    // Not on this server: maybe another server's evaluation sharing the home; only --forgotten touches it.
    const cautious = JSON.parse((await runVero(['clean', '-c', f.configFile, '--older-than', '30d', '--yes', '--json'])).stdout) as {
      items: { path: string }[];
      unknown: string[];
    };
    expect(cautious.unknown).toEqual(['eval-gone']);
    expect(cautious.items.map((i) => path.relative(f.home, i.path))).toEqual([`worktrees/${'f'.repeat(40)}`]);
    expect(fs.existsSync(path.join(f.home, 'results', 'eval-gone.json'))).toBe(true);
    plant(`worktrees/${'f'.repeat(40)}/agent.py`);
    const listed = await runVero(['clean', '-c', f.configFile, '--older-than', '30d', '--forgotten']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/would remove 4 item\(s\), .* MiB; add --yes to remove them/);
    expect(fs.existsSync(path.join(f.home, 'results', 'eval-gone.json'))).toBe(true); // only listed
    const removed = JSON.parse(
      (await runVero(['clean', '-c', f.configFile, '--older-than', '30d', '--forgotten', '--yes', '--json'])).stdout,
    ) as {
      removed: boolean;
      items: { kind: string; path: string; reason: string }[];
    };
    expect(removed.removed).toBe(true);
    expect(removed.items.map((i) => [i.kind, path.relative(f.home, i.path)]).sort()).toEqual([
      ['result', 'results/eval-gone'],
      ['result', 'results/eval-gone.json'],
      ['run dir', 'runs/eval-gone'],
      ['worktree', `worktrees/${'f'.repeat(40)}`],
    ]);
    for (const i of removed.items) expect(fs.existsSync(i.path)).toBe(false);
    // Retention 0: the finished evaluation's run dir and worktree go, its result stays; the running one is untouched.
    const all = JSON.parse((await runVero(['clean', '-c', f.configFile, '--older-than', '0s', '--yes', '--json'])).stdout) as {
      items: { path: string }[];
    };
    expect(all.items.map((i) => path.relative(f.home, i.path)).sort()).toEqual([`runs/${done.evalId}`, `worktrees/${done.candidate}`]);
    expect(fs.existsSync(done.resultFile)).toBe(true);
    expect(fs.existsSync(path.join(f.home, 'runs', running))).toBe(true);
    expect((await runVero(['results', done.evalId, '--json', '--address', address()])).code).toBe(0);
  } finally {
    if (running) await cancelAndSettle(running);
  }
});

test('the progress bar on a terminal: elapsed time and an ETA, and its last frame is the final state', async () => {
  const q = sharedWorkerQueue();
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    scenario: { default: { reward: 1, duration_ms: 1500 } },
    execution: { concurrency: 2 },
  });
  // util-linux's `script` gives the command a pseudo-terminal, as a person's shell would.
  const cmd = [VERO, 'start-eval', '-c', f.configFile, '--candidate', 'improved', '--wait'].map((a) => `'${a}'`).join(' ');
  const r = spawnSync('script', ['-qec', cmd, '/dev/null'], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, COLUMNS: '200' },
  });
  expect(r.status).toBe(0);
  // Frames are redrawn from column 1 (ESC [1G).
  const frames = r.stdout
    .split(new RegExp(`${String.fromCharCode(27)}\\[1G|\\r|\\n`))
    .filter((l) => l.includes('tasks ') && l.includes('| running'));
  expect(frames.length).toBeGreaterThan(1);
  expect(frames.some((l) => /\| \d+s elapsed, eta \d+s/.test(l) && !/ 6\/6 /.test(l))).toBe(true);
  expect(frames.at(-1)).toMatch(/ 6\/6 \| running 0 \| errors 0 \| mean 1\.000 \| \d+s elapsed, eta 0s/);
});
