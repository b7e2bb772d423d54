/**
 * `vero view`'s HTTP server (fastify): the pages of cli/view-pages.ts over Temporal and the home's files, a race's
 * page (cli/view-race.ts, `/race/:id`) and, with --session, a sidecar session's (cli/view-session.ts, `/session`).
 * Read-only; a trial's page (cli/view-trajectory.ts) only for a trial dir of a run's job; only the files its pages link (isLinkedFile: harbor logs and trial files in run dirs, their real
 * paths inside the home: infra/home-file.ts), at most MAX_FILE_BYTES each, served as text with `nosniff`; every
 * page has a CSP that allows no script from elsewhere. Only requests whose Host is a loopback name, an IP or the
 * --host given are answered (infra/host-check.ts).
 */
import * as fs from 'node:fs';
import { type Client, WorkflowFailedError } from '@temporalio/client';
import Fastify, { FastifyInstance, FastifyReply } from 'fastify';
import { listRaces, RACE_ID, raceState } from '../client/race-client';
import { trialDetail } from '../client/trial-detail';
import { trajectoryPair } from '../client/trajectory-pair';
import { compareDetail, evaluationDetail, evaluationRows, isLinkedFile, isTrialDir } from '../client/view-data';
import { readHomeFile } from '../infra/home-file';
import { refuseForeignHosts } from '../infra/host-check';
import { listenOn } from '../infra/listen';
import { causeChain } from '../model/errors';
import { taskNote } from './format';
import { CHART_JS_URL, comparePage, errorPage, evaluationPage, indexPage, NAV } from './view-pages';
import { pairPage } from './view-pair';
import { racePage, racesSection } from './view-race';
import { sessionPage } from './view-session';
import { readSession } from './view-session-data';
import { trialPage } from './view-trajectory';
import { CHART_JS_FILE } from './views';

/** The most of one file the viewer sends (the rest is cut, and the cut is said). */
export const MAX_FILE_BYTES = 2 * 1024 * 1024;

export interface ViewServerOptions {
  client: Client;
  home: string;
  agentRepo?: string;
  configDigest?: string;
  /** What the evaluations are (for the page): "of vero.yaml", "on this server". */
  scope: string;
  uiLink: (evalId: string) => string | null;
  host: string;
  port: number;
  /** A compiled task's sidecar session to draw at /session (`vero view --session DIR`). */
  session?: string;
}

const CSP =
  "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'self'";

/** The CSP of a page that shows a trial's files (untrusted text): no script at all, escaped or not. */
const NO_SCRIPT_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

function html(reply: FastifyReply, status: number, body: string, csp = CSP): FastifyReply {
  return reply.code(status).header('content-type', 'text/html; charset=utf-8').header('content-security-policy', csp).send(body);
}

/** The failure of a page in words: an unknown evaluation is a 404, anything else a 500 with its message. */
function failure(reply: FastifyReply, e: unknown): FastifyReply {
  const message = (e as Error).message.split('\n')[0] ?? String(e);
  const notFound = (e as Error).name === 'WorkflowNotFoundError' || /not found/i.test(message);
  // A workflow that failed (a race that ended failed): why, from its cause chain.
  const said = e instanceof WorkflowFailedError ? causeChain(e).split('\n')[0]! : message;
  return html(reply, notFound ? 404 : 500, errorPage(notFound ? 404 : 500, said));
}

/** The page `make` draws (200), or its failure in words. */
async function pageOr(reply: FastifyReply, make: () => string | Promise<string>, csp = CSP): Promise<FastifyReply> {
  try {
    return html(reply, 200, await make(), csp);
  } catch (e) {
    return failure(reply, e);
  }
}

/** A `?page=` value: a whole number from 1 (absent: 1), else null. */
function pageNumber(v: string | undefined): number | null {
  if (v === undefined) return 1;
  return /^[1-9]\d{0,6}$/.test(v) ? Number(v) : null;
}

/** A trial's page and two candidates on one task: untrusted files, so pages without any script. */
function addTrajectoryRoutes(app: FastifyInstance, o: ViewServerOptions): void {
  app.get<{ Querystring: { a?: string; b?: string; task?: string; page?: string } }>('/pair', async (req, reply) => {
    const { a, b, task } = req.query;
    if (!a || !b || !task) return html(reply, 400, errorPage(400, 'pair needs ?a=EVAL_ID&b=EVAL_ID&task=TASK'));
    const pageNo = pageNumber(req.query.page);
    if (pageNo === null) return html(reply, 400, errorPage(400, 'page: expected a whole number from 1'));
    return pageOr(reply, async () => pairPage(await trajectoryPair(o.client, o.home, a, b, task, pageNo), NAV), NO_SCRIPT_CSP);
  });
  app.get<{ Params: { '*': string }; Querystring: { page?: string } }>('/trial/*', async (req, reply) => {
    const rel = req.params['*'].replace(/\/+$/, '');
    if (!isTrialDir(rel)) return html(reply, 403, errorPage(403, `${rel}: not a trial dir this viewer shows`));
    const pageNo = pageNumber(req.query.page);
    if (pageNo === null) return html(reply, 400, errorPage(400, 'page: expected a whole number from 1'));
    return pageOr(reply, async () => trialPage(await trialDetail(o.home, rel, pageNo), pageNo, NAV), NO_SCRIPT_CSP);
  });
}

/** A race's page (`/race/:id`): an id that is not a race id is refused by name, an unknown race is a 404. */
function addRaceRoutes(app: FastifyInstance, o: ViewServerOptions): void {
  app.get<{ Params: { id: string } }>('/race/:id', async (req, reply) => {
    const id = req.params.id;
    if (!RACE_ID.test(id)) return html(reply, 400, errorPage(400, 'race id: expected race-<16 hex digits>, as vero race prints it'));
    return pageOr(reply, async () => racePage(await raceState(o.client, id), NAV));
  });
}

/** The sidecar session's page (`/session`), when the viewer was given one; read afresh at every request. */
function addSessionRoutes(app: FastifyInstance, o: ViewServerOptions): void {
  app.get('/session', async (_req, reply) => {
    const dir = o.session;
    if (!dir) return html(reply, 404, errorPage(404, 'no sidecar session: start vero view with --session DIR'));
    return pageOr(reply, () => sessionPage(readSession(dir), NAV));
  });
}

/** What the index shows under the evaluations: the home's races, and the sidecar session when there is one. */
async function indexExtras(o: ViewServerOptions): Promise<string> {
  const races = await listRaces(o.client, o.home).catch((e: unknown) => (e as Error).message.split('\n')[0] ?? 'unknown error');
  const session = o.session
    ? `<h2>Sidecar session</h2><p><a id="session-link" href="/session">its evaluations and early stops</a></p>`
    : '';
  return `${racesSection(races)}${session}`;
}

export async function startViewServer(o: ViewServerOptions): Promise<{ app: FastifyInstance; url: string }> {
  const app = Fastify({ logger: false });
  refuseForeignHosts(app, [o.host]);
  app.get('/', async (_req, reply) =>
    pageOr(reply, async () => {
      const rows = await evaluationRows(o.client, { configDigest: o.configDigest, agentRepo: o.agentRepo });
      return indexPage(rows, o.scope, await indexExtras(o));
    }),
  );
  app.get<{ Params: { id: string } }>('/eval/:id', async (req, reply) =>
    pageOr(reply, async () => evaluationPage(await evaluationDetail(o.client, req.params.id, o.home, taskNote), o.uiLink(req.params.id))),
  );
  app.get<{ Querystring: { a?: string; b?: string } }>('/compare', async (req, reply) => {
    const { a, b } = req.query;
    if (!a || !b) return html(reply, 400, errorPage(400, 'compare needs ?a=EVAL_ID&b=EVAL_ID'));
    return pageOr(reply, async () => comparePage(await compareDetail(o.client, a, b)));
  });
  addTrajectoryRoutes(app, o);
  addRaceRoutes(app, o);
  addSessionRoutes(app, o);
  app.get<{ Params: { '*': string } }>('/file/*', async (req, reply) => {
    const f = readHomeFile(o.home, req.params['*'], MAX_FILE_BYTES, isLinkedFile); // fastify has decoded it
    if (!f.ok) return reply.code(f.status).header('content-type', 'text/plain; charset=utf-8').send(`refused: ${f.reason}\n`);
    const cut = f.truncated ? `\n\n[vero view: the first ${MAX_FILE_BYTES} of ${f.size} bytes]\n` : '';
    return reply
      .header('content-type', 'text/plain; charset=utf-8')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'")
      .send(Buffer.concat([f.content, Buffer.from(cut)]));
  });
  const chartJs = fs.readFileSync(CHART_JS_FILE);
  app.get(CHART_JS_URL, async (_req, reply) =>
    reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'max-age=3600').send(chartJs),
  );
  app.setNotFoundHandler((req, reply) => html(reply, 404, errorPage(404, `no page at ${req.url}`)));
  const address = await listenOn(app, o.host, o.port, '--port');
  return { app, url: address.replace('[::1]', 'localhost') };
}
