/**
 * The harbor fork server (harbor/forkserver.ts): a run it forks is what a spawned harbor would be (its own
 * session and group, cwd, environment, PYTHONPATH, log files, exit code), stops the same way, is adopted by its
 * pid file's start time, and outlives the server. Harbor here is a stand-in package in a real virtualenv, so its
 * console script looks like Harbor's own.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { liveOrphan, writePidFile } from '../../harbor/orphans';
import { closeForkServers, consoleScriptPython, forkHarbor, forkServerRecords, removeStaleServerDirs } from '../../harbor/forkserver';
import { groupAlive, runInGroup } from '../../infra/process-group';
import { hostId } from '../../infra/host-groups';
import { tempDir } from '../helpers/fixtures';
import { until } from '../helpers/process';
import { consoleScript, consoleScriptNames, fakeHarborVenv } from '../helpers/fake-harbor-venv';

jest.setTimeout(60_000);

const FAKE_HARBOR = `
import json, os, sys, time
import pydantic

def app():
    cmd = sys.argv[1]
    if cmd == "report":
        print(json.dumps({"argv0": sys.argv[0], "cwd": os.getcwd(), "env": dict(os.environ), "path": sys.path[:2],
                          "pid": os.getpid(), "pgid": os.getpgid(0), "sid": os.getsid(0)}))
        print("to stderr", file=sys.stderr)
        sys.exit(int(sys.argv[2]))
    if cmd == "import":
        import candidate_module
        print(candidate_module.VALUE)
    if cmd == "sleep":
        time.sleep(float(sys.argv[2]))
    if cmd == "pydantic":
        print(pydantic.ORIGIN)
`;

let venv: string;
let harbor: string;
let work: string;

beforeAll(() => {
  work = tempDir('vero-fork-');
  venv = path.join(work, 'venv');
  const { site } = fakeHarborVenv(venv, FAKE_HARBOR);
  // A dependency Harbor imports (as the real one imports pydantic): the server has it before any fork.
  fs.mkdirSync(path.join(site, 'pydantic'));
  fs.writeFileSync(path.join(site, 'pydantic', '__init__.py'), 'ORIGIN = "the server\'s pydantic"\n');
  harbor = path.join(venv, 'bin', 'harbor');
  fs.mkdirSync(path.join(work, 'cwd'));
});

afterAll(async () => {
  await closeForkServers();
  // Nothing of the test's servers is left.
  expect(serverPids()).toEqual([]);
});

function serverPids(): number[] {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        return (
          fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('forkserver.py') &&
          fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(venv)
        );
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** A run of `launcher` (the fake Harbor's console script unless said) through the fork server, and its starts. */
const run = (args: string[], log: string, more: Partial<Parameters<typeof runInGroup>[1]> = {}, launcher = harbor) => {
  const starts: { pid: number; forked: boolean }[] = [];
  const done = runInGroup([launcher, ...args], {
    cwd: path.join(work, 'cwd'),
    env: { VERO_HARBOR_JOB_DIR: '/jobs/t', PYTHONPATH: path.join(work, 'candidate') },
    logFile: path.join(work, log),
    fork: forkHarbor,
    onStart: (pid, forked) => starts.push({ pid, forked }),
    ...more,
  });
  return { done, starts };
};

test('a forked run is what a spawned harbor would be: own session and group, cwd, environment, PYTHONPATH, logs, exit code', async () => {
  expect(consoleScriptPython(harbor)).toBe(path.join(venv, 'bin', 'python'));
  const { done, starts } = run(['report', '3'], 'report.log');
  const r = await done;
  expect(starts).toEqual([{ pid: r.pid, forked: true }]);
  expect(r).toMatchObject({ exitCode: 3, signal: null, timedOut: false, cancelled: false, notFound: false });
  const log = fs.readFileSync(path.join(work, 'report.log'), 'utf8');
  expect(log).toContain('to stderr');
  const seen = JSON.parse(log.split('\n')[0]!) as {
    argv0: string;
    cwd: string;
    env: Record<string, string>;
    path: string[];
    pid: number;
    pgid: number;
    sid: number;
  };
  expect(seen.pid).toBe(r.pid);
  expect(seen.pgid).toBe(seen.pid);
  expect(seen.sid).toBe(seen.pid);
  expect(seen.cwd).toBe(path.join(work, 'cwd'));
  expect(seen.argv0).toBe(harbor);
  expect(seen.path).toEqual([path.join(venv, 'bin'), path.join(work, 'candidate')]);
  expect(seen.env.VERO_HARBOR_JOB_DIR).toBe('/jobs/t');
  expect(seen.env.PYTHONPATH).toBe(path.join(work, 'candidate'));
  expect(seen.env.PATH).toBe(process.env.PATH);
});

test("a forked run imports the candidate's modules from its PYTHONPATH (the server never did)", async () => {
  fs.mkdirSync(path.join(work, 'candidate'), { recursive: true });
  fs.writeFileSync(path.join(work, 'candidate', 'candidate_module.py'), 'VALUE = "from the candidate"\n');
  const { done } = run(['import'], 'import.log');
  expect(await done).toMatchObject({ exitCode: 0 });
  expect(fs.readFileSync(path.join(work, 'import.log'), 'utf8')).toContain('from the candidate');
});

test('a forked run is stopped at its deadline as a group, and SIGTERM to it is reported', async () => {
  const { done } = run(['sleep', '60'], 'deadline.log', { deadline: Date.now() + 1500, graceMs: 2000, stopTarget: 'leader' });
  const r = await done;
  expect(r).toMatchObject({ timedOut: true, signal: 'SIGTERM' });
  expect(groupAlive(r.pid!)).toBe(false);
});

test('a forked run is adopted by its pid file (its environment is the server’s), and outlives its server', async () => {
  const { done, starts } = run(['sleep', '3'], 'adopt.log');
  await until('started', async () => starts.length === 1, 45_000);
  const pid = starts[0]!.pid;
  const pidFile = path.join(work, 'adopt.pid');
  writePidFile(pidFile, pid, Date.now());
  expect(fs.readFileSync(`/proc/${pid}/environ`, 'utf8')).not.toContain('VERO_HARBOR_JOB_DIR=/jobs/t');
  expect(liveOrphan('/jobs/t', pidFile)).toMatchObject({ pid });
  // The server goes away (its worker died): the run goes on, and its end is still seen (its code is lost).
  await closeForkServers();
  expect(groupAlive(pid)).toBe(true);
  const r = await done;
  expect(r).toMatchObject({ exitCode: null, timedOut: false, cancelled: false, pid });
  expect(groupAlive(pid)).toBe(false);
  expect(liveOrphan('/jobs/t', pidFile)).toBeNull();
});

test('not a console script, or VERO_HARBOR_FORK=0: spawned as before', async () => {
  const script = path.join(work, 'not-harbor.sh');
  fs.writeFileSync(script, '#!/bin/bash\nexit 4\n', { mode: 0o755 });
  const forkedFlags: boolean[] = [];
  const r = await runInGroup([script], {
    cwd: work,
    logFile: path.join(work, 'x.log'),
    fork: forkHarbor,
    onStart: (_, f) => forkedFlags.push(f),
  });
  expect(r.exitCode).toBe(4);
  process.env.VERO_HARBOR_FORK = '0';
  try {
    const { done, starts } = run(['report', '0'], 'spawned.log');
    expect(await done).toMatchObject({ exitCode: 0 });
    forkedFlags.push(starts[0]!.forked);
    // A spawned harbor's environment names its job, as before.
    const seen = JSON.parse(fs.readFileSync(path.join(work, 'spawned.log'), 'utf8').split('\n')[0]!) as { pid: number };
    expect(seen.pid).toBe(starts[0]!.pid);
  } finally {
    delete process.env.VERO_HARBOR_FORK;
  }
  expect(forkedFlags).toEqual([false, false]);
});

test('a server that cannot start (its Python cannot import Harbor) means spawned runs, not failed ones', async () => {
  const script = fakeHarborVenv(path.join(work, 'broken-venv'), null).harbor;
  const forked: boolean[] = [];
  for (const i of [1, 2]) {
    const r = await runInGroup([script, 'report', '0'], {
      cwd: work,
      logFile: path.join(work, `broken-${i}.log`),
      fork: forkHarbor,
      onStart: (_, f) => forked.push(f),
    });
    expect(r.exitCode).toBe(1); // the spawned script's own ImportError, as without the fork server
  }
  expect(forked).toEqual([false, false]);
  expect(fs.readFileSync(path.join(work, 'broken-2.log'), 'utf8')).toMatch(/ModuleNotFoundError: No module named 'harbor'/);
});

test("a dead worker's server socket dir is removed (a server killed with its worker's group leaves it); a live one's and another host's are kept", () => {
  const tmp = tempDir('vero-fork-tmp-');
  const deadPid = spawnSync('true').pid!;
  const live = spawn('sleep', ['30']);
  try {
    const names = {
      dead: `vero-harbor-fork-${hostId()}-${deadPid}-AbC123`,
      live: `vero-harbor-fork-${hostId()}-${live.pid}-XyZ789`,
      otherHost: `vero-harbor-fork-some-other-host-${deadPid}-QrS456`,
      other: 'vero-harbor-fork-unrelated',
    };
    for (const n of Object.values(names)) fs.mkdirSync(path.join(tmp, n));
    fs.writeFileSync(path.join(tmp, names.dead, 'sock'), '');
    expect(removeStaleServerDirs(tmp)).toEqual([names.dead]);
    expect(fs.readdirSync(tmp).sort()).toEqual([names.live, names.otherHost, names.other].sort());
  } finally {
    live.kill('SIGKILL');
  }
});

test("a run whose PYTHONPATH provides a module the server imported is spawned, and sees the candidate's copy", async () => {
  const plain = path.join(work, 'plain-pythonpath');
  fs.mkdirSync(plain);
  fs.writeFileSync(path.join(plain, 'helper.py'), '');
  const forked = run(['pydantic'], 'pydantic-plain.log', { env: { PYTHONPATH: plain } });
  expect(await forked.done).toMatchObject({ exitCode: 0 });
  expect(forked.starts.map((s) => s.forked)).toEqual([true]);
  expect(fs.readFileSync(path.join(work, 'pydantic-plain.log'), 'utf8')).toContain("the server's pydantic");
  const [before] = await forkServerRecords();
  // The candidate vendors pydantic: a forked child would keep the server's, a spawned harbor imports this one.
  const vendored = path.join(work, 'vendored');
  fs.mkdirSync(path.join(vendored, 'pydantic'), { recursive: true });
  fs.writeFileSync(path.join(vendored, 'pydantic', '__init__.py'), 'ORIGIN = "the candidate\'s pydantic"\n');
  const spawned = run(['pydantic'], 'pydantic-vendored.log', { env: { PYTHONPATH: `${plain}:${vendored}` } });
  expect(await spawned.done).toMatchObject({ exitCode: 0 });
  expect(spawned.starts.map((s) => s.forked)).toEqual([false]);
  expect(fs.readFileSync(path.join(work, 'pydantic-vendored.log'), 'utf8')).toContain("the candidate's pydantic");
  expect(await forkServerRecords()).toEqual([before]); // no new fork
});

test("pip's and uv's console scripts are forked; a wrapper that merely contains Harbor's import is spawned as written", async () => {
  const python = path.join(venv, 'bin', 'python');
  const uvScript = (argv0Fix: string) =>
    `#!${python}\n# -*- coding: utf-8 -*-\nimport sys\nfrom harbor.cli.main import app\nif __name__ == "__main__":\n${argv0Fix}    sys.exit(app())\n`;
  const scripts = {
    uvRe: uvScript(`    sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])\n`).replace(
      'import sys',
      'import re\nimport sys',
    ),
    uvEndswith: uvScript(
      '    if sys.argv[0].endswith("-script.pyw"):\n        sys.argv[0] = sys.argv[0][:-11]\n    elif sys.argv[0].endswith(".exe"):\n        sys.argv[0] = sys.argv[0][:-4]\n',
    ),
    wrapper: `#!${python}\nimport os, sys\nos.environ["FROM_WRAPPER"] = "1"\nfrom harbor.cli.main import app\nsys.exit(app())\n`,
  };
  for (const [name, text] of Object.entries(scripts)) fs.writeFileSync(path.join(venv, 'bin', name), text, { mode: 0o755 });
  expect(consoleScriptPython(path.join(venv, 'bin', 'uvRe'))).toBe(python);
  expect(consoleScriptPython(path.join(venv, 'bin', 'uvEndswith'))).toBe(python);
  expect(consoleScriptPython(path.join(venv, 'bin', 'wrapper'))).toBeNull();
  const { done, starts } = run(['report', '0'], 'wrapper.log', { env: undefined }, path.join(venv, 'bin', 'wrapper'));
  expect((await done).exitCode).toBe(0);
  expect(starts.map((x) => x.forked)).toEqual([false]);
  const seen = JSON.parse(fs.readFileSync(path.join(work, 'wrapper.log'), 'utf8').split('\n')[0]!) as { env: Record<string, string> };
  expect(seen.env.FROM_WRAPPER).toBe('1');
});

test.each(consoleScriptNames())('the real console script %s is forked; the same with any one line changed is not', (name) => {
  const python = path.join(venv, 'bin', 'python');
  const text = consoleScript(name, python);
  const script = path.join(venv, 'bin', name);
  fs.writeFileSync(script, text, { mode: 0o755 });
  expect(consoleScriptPython(script)).toBe(python);
  // Read through a link, as the one `uv tool install` makes in its bin dir (~/.local/bin) to the tool's venv.
  const link = path.join(work, `link-${name}`);
  fs.symlinkSync(script, link);
  expect(consoleScriptPython(link)).toBe(python);
  const lines = text.split('\n');
  for (let i = 1; i < lines.length && lines[i] !== ''; i++) {
    const wrapper = path.join(venv, 'bin', `${name}-${i}`);
    const changed = lines.map((l, j) => (j === i ? 'import os; os.environ["FROM_WRAPPER"] = "1"' : l));
    fs.writeFileSync(wrapper, changed.join('\n'), { mode: 0o755 });
    expect([i, consoleScriptPython(wrapper)]).toEqual([i, null]);
  }
  fs.writeFileSync(`${script}-appended`, `${text}import os; os.environ["FROM_WRAPPER"] = "1"\n`, { mode: 0o755 });
  expect(consoleScriptPython(`${script}-appended`)).toBeNull();
});

test('a run of harbor by the link `uv tool install` makes to its console script is forked', async () => {
  const script = path.join(venv, 'bin', 'uv-tool-harbor');
  fs.writeFileSync(script, consoleScript('uv-0.13.8-tool-install', path.join(venv, 'bin', 'python')), { mode: 0o755 });
  fs.mkdirSync(path.join(work, 'tool-bin'));
  fs.symlinkSync(script, path.join(work, 'tool-bin', 'harbor'));
  const { done, starts } = run(['report', '4'], 'uv-tool.log', { env: undefined }, path.join(work, 'tool-bin', 'harbor'));
  expect((await done).exitCode).toBe(4);
  expect(starts.map((x) => x.forked)).toEqual([true]);
  expect(JSON.parse(fs.readFileSync(path.join(work, 'uv-tool.log'), 'utf8').split('\n')[0]!)).toMatchObject({
    argv0: path.join(work, 'tool-bin', 'harbor'),
  });
});

test('a cancel while the fork server is still importing Harbor (here: forever) ends the run promptly, spawned and cancelled', async () => {
  const script = fakeHarborVenv(path.join(work, 'hung-venv'), 'import time\ntime.sleep(600)\n').harbor;
  const cancel = new AbortController();
  setTimeout(() => cancel.abort(), 1500);
  const forked: boolean[] = [];
  const started = Date.now();
  const r = await runInGroup([script, 'report', '0'], {
    cwd: path.join(work, 'cwd'),
    logFile: path.join(work, 'hung.log'),
    fork: forkHarbor,
    signal: cancel.signal,
    graceMs: 2000,
    onStart: (_, f) => forked.push(f),
  });
  expect(r).toMatchObject({ cancelled: true, timedOut: false });
  expect(forked).toEqual([false]);
  expect(Date.now() - started).toBeLessThan(10_000);
  expect(groupAlive(r.pid!)).toBe(false);
});
