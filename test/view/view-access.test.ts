/**
 * What `vero view` answers, and to whom: only requests naming this machine by a loopback name, an IP or the host
 * it was given (a page whose DNS name was rebound to 127.0.0.1 gets nothing), and only the files its pages link
 * (not the Temporal database, worktrees or anything else under the home, not even through a symlink). Driven in
 * Debian's headless Chromium, with a rebinding simulated by its host resolver rules.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { startViewServer } from '../../cli/view-server';
import { isLinkedFile } from '../../client/view-data';
import { hostAllowed } from '../../infra/host-check';
import { CHROMIUM } from '../helpers/chromium';
import { tempDir } from '../helpers/fixtures';
import { client } from '../helpers/temporal';

jest.setTimeout(120_000);

test('the files a viewer links, and only those', () => {
  const run = 'runs/eval-abc/run-1/jobs';
  for (const rel of [
    `${run}/hello.harbor.log`,
    `${run}/hello/hello__1/result.json`,
    `${run}/hello/hello__1/trial.log`,
    `${run}/hello/hello__1/exception.txt`,
    `${run}/hello/hello__1/agent/trajectory.json`,
    `${run}/hello/hello__1/verifier/reward.txt`,
  ])
    expect([rel, isLinkedFile(rel)]).toEqual([rel, true]);
  for (const rel of [
    'temporal.db',
    'temporal.db.log',
    'worktrees/abc/agent.py',
    'repos/x.git/config',
    'results/eval-abc.json',
    `${run}/hello.pid`,
    `${run}/hello/config.json`,
    `${run}/hello/hello__1/agent/setup/secret.env`,
    `${run}/hello/../../../../../temporal.db`,
    `runs/eval-abc/run-1/preflight.harbor.log/../../../../temporal.db`,
  ])
    expect([rel, isLinkedFile(rel)]).toEqual([rel, false]);
});

test('Host names answered: loopback names, IPs, the names given; nothing else', () => {
  for (const h of ['localhost:8234', 'LOCALHOST', 'localhost.:80', 'view.localhost:1', '127.0.0.1:8234', '[::1]:8234', '10.0.0.5'])
    expect([h, hostAllowed(h)]).toEqual([h, true]);
  for (const h of [undefined, '', 'attacker.example', 'attacker.example:8234', 'localhost.attacker.example', '127.0.0.1.nip.io', 'a:b:c'])
    expect([h, hostAllowed(h)]).toEqual([h, false]);
  expect(hostAllowed('eval-sidecar:8000', ['eval-sidecar'])).toBe(true);
  expect(hostAllowed('myhost:8234', ['myhost'])).toBe(true);
});

test('vero view in Chromium: a rebound DNS name is refused; the Temporal database and worktrees are never served', async () => {
  const home = path.join(tempDir('vero-view-access-'), 'home');
  const run = path.join(home, 'runs', 'eval-abc', 'run-1', 'jobs');
  const trial = path.join(run, 'hello', 'hello__1');
  fs.mkdirSync(path.join(trial, 'agent'), { recursive: true });
  fs.mkdirSync(path.join(home, 'worktrees', 'abc'), { recursive: true });
  fs.writeFileSync(path.join(home, 'temporal.db'), 'SQLITE-HISTORY');
  fs.writeFileSync(path.join(home, 'worktrees', 'abc', 'agent.py'), 'AGENT-SOURCE');
  fs.writeFileSync(path.join(run, 'hello.harbor.log'), 'HARBOR-LOG');
  fs.writeFileSync(path.join(trial, 'result.json'), '{"trial_name": "hello__1"}');
  // A trial file (the candidate writes them) that is a symlink to the database: a linked name, another file.
  fs.symlinkSync(path.join(home, 'temporal.db'), path.join(trial, 'agent', 'trajectory.json'));

  const c = await client();
  let app: FastifyInstance | null = null;
  const { chromium } = require('playwright-core') as typeof import('playwright-core');
  if (!CHROMIUM) throw new Error("no chromium at /usr/bin/chromium: install Debian's");
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    // attacker.example resolves to this machine, as a rebinding DNS server would make it.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--disable-background-networking',
      '--host-resolver-rules=MAP attacker.example 127.0.0.1',
    ],
  });
  try {
    const started = await startViewServer({ client: c, home, scope: 'here', uiLink: () => null, host: '127.0.0.1', port: 0 });
    app = started.app;
    const port = new URL(started.url).port;
    const page = await browser.newPage();
    const get = async (url: string) => {
      const r = await page.goto(url);
      return { status: r!.status(), body: (await page.textContent('body')) ?? '' };
    };
    const files = `runs/eval-abc/run-1/jobs`;

    // Loopback: the linked files open.
    expect(await get(`http://localhost:${port}/file/${files}/hello.harbor.log`)).toEqual({ status: 200, body: 'HARBOR-LOG' });
    expect((await get(`http://127.0.0.1:${port}/file/${files}/hello/hello__1/result.json`)).status).toBe(200);

    // A rebound name: refused before any page or file, whatever the path.
    for (const p of ['/', `/file/${files}/hello.harbor.log`, '/file/worktrees/abc/agent.py']) {
      const r = await get(`http://attacker.example:${port}${p}`);
      expect([p, r.status]).toEqual([p, 421]);
      expect(r.body).not.toMatch(/HARBOR-LOG|AGENT-SOURCE|evaluation/);
    }

    // Files the pages do not link are not served, not even to loopback.
    for (const p of ['temporal.db', 'worktrees/abc/agent.py', `${files}/hello/hello__1/agent/trajectory.json`]) {
      const r = await get(`http://localhost:${port}/file/${p}`);
      expect([p, r.status]).toEqual([p, 403]);
      expect(r.body).toMatch(/not a file this viewer links/);
      expect(r.body).not.toMatch(/SQLITE-HISTORY|AGENT-SOURCE/);
    }
  } finally {
    await browser.close();
    await app?.close();
    await c.connection.close();
  }
});
