/**
 * A relaunch from a rescued session, without Docker: a real sidecar spends budget and evaluates a candidate,
 * `vero snapshot` takes its session (as the task's collect step does), and a second sidecar, on fresh state dirs
 * and a fresh build of the same build.yaml, restores it: the ledger, the candidates (with their commits, so
 * finalize grades one the new workbench never had), the jobs and the results shown. A bad or foreign session
 * is refused by `vero run --resume-from` (exit 2, naming each problem) and by the sidecar itself.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as tar from 'tar';
import { buildTaskDir } from '../../compiler/compile';
import { ServeConfig } from '../../model/compiled-task/serve-config';
import { RESUME_SESSION_ENV } from '../../model/compiled-task/session-snapshot';
import { checkSessionDir } from '../../sidecar/session-check';
import { readSealKey } from '../../sidecar/ledger-seal';
import { tempDir } from '../helpers/fixtures';
import { cli, commitImprovement, finalizeAsVerifier, git, onHost, setup, startSidecar, VERO, type Setup } from '../helpers/sidecar';
import { address } from '../helpers/temporal';

jest.setTimeout(240_000);

const snapshot = (s: Setup, out: string) => spawnSync(VERO, ['snapshot', '--config', s.serveFile, '--out', out], { encoding: 'utf8' });

/**
 * The same build.yaml built again (once for this file: every relaunch starts from that rebuild), and fresh state
 * dirs: what a relaunched trial starts from. Each relaunch gets its own copy of the rebuild's baseline repo, which
 * a sidecar adds candidate refs to.
 */
let rebuilt: Promise<string> | undefined;
async function relaunch(s: Setup, resumeDir: string): Promise<Setup & { task: string }> {
  const dir = tempDir('vero-relaunch-');
  rebuilt ??= (async () => {
    const task = path.join(tempDir('vero-rebuild-'), 'task');
    await buildTaskDir(path.join(s.dir, 'build.yaml'), task, { skipSecretCheck: true, linkRuntime: true });
    return task;
  })();
  const task = await rebuilt;
  const work = path.join(dir, 'workspace-agent');
  fs.cpSync(path.join(task, 'environment', 'agent-seed'), work, { recursive: true });
  git(work, 'reset', '-q');
  const host = onHost(task, dir, work);
  host.repo_path = path.join(dir, 'agent-baseline');
  fs.cpSync(path.join(task, 'environment', 'agent-baseline'), host.repo_path, { recursive: true });
  const cfg: ServeConfig = { ...s.cfg, ...host, paths: { ...host.paths, resume_dir: resumeDir } };
  const serveFile = path.join(dir, 'serve.json');
  fs.writeFileSync(serveFile, JSON.stringify(cfg));
  return { dir, serveFile, cfg, work, queue: s.queue, task };
}

const budgets = async (url: string) =>
  Object.fromEntries(
    (
      (await (await fetch(`${url}/status`)).json()) as { splits: { split: string; budget: { remaining_run_budget: number } | null }[] }
    ).splits
      .filter((x) => x.budget)
      .map((x) => [x.split, x.budget!.remaining_run_budget]),
  );

describe('a relaunch from a rescued session', () => {
  let s: Setup;
  let session = '';
  let candidate = '';
  beforeAll(async () => {
    s = await setup();
    const side = await startSidecar(s);
    try {
      candidate = commitImprovement(s.work);
      expect((await cli(['eval', '--split', 'train', '--num-samples', '2'], side.url)).code).toBe(0);
      expect((await cli(['eval', '--split', 'validation'], side.url)).code).toBe(0);
      session = path.join(s.dir, 'admin', 'session');
      // As the collect step takes it, while the sidecar still runs.
      const r = snapshot(s, session);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
    } finally {
      await side.stop('SIGKILL'); // the trial dies
    }
  });

  test('the snapshot holds the state, the results shown and the candidate’s commit, each file listed with its digest', () => {
    const files = fs.readdirSync(session, { recursive: true, encoding: 'utf8' }).sort();
    expect(files).toEqual(
      expect.arrayContaining([
        'candidates.bundle',
        'candidates.json',
        'ledger.json',
        'ledger.seal',
        'session.json',
        'eval-jobs',
        `disclosed/train__${candidate.slice(0, 12)}/summary.json`,
      ]),
    );
    const m = JSON.parse(fs.readFileSync(path.join(session, 'session.json'), 'utf8')) as {
      files: Record<string, string>;
      build_digest: string;
    };
    expect(Object.keys(m.files).sort()).toEqual(files.filter((f) => f !== 'session.json' && fs.statSync(path.join(session, f)).isFile()));
    expect(m.build_digest).toBe(fs.readFileSync(s.cfg.paths.build_digest!, 'utf8').trim());
  });

  test('a relaunched sidecar has the spent budget and the candidate, grades it without the workbench having it, and applies the session once', async () => {
    const r = await relaunch(s, session);
    // The rebuild of the same build.yaml is the same build: the session is accepted.
    expect(fs.readFileSync(r.cfg.paths.build_digest!, 'utf8')).toBe(fs.readFileSync(s.cfg.paths.build_digest!, 'utf8'));
    const side = await startSidecar(r);
    try {
      expect(side.log()).toContain('resumed the session taken at');
      expect(await budgets(side.url)).toEqual({ train: 4, validation: 2 });
      // What the optimizer was shown is back where it reads it.
      expect(fs.existsSync(path.join(r.cfg.paths.agent_volume, 'results', `train__${candidate.slice(0, 12)}`, '0.json'))).toBe(true);
      expect(spawnSync('git', ['-C', r.work, 'cat-file', '-e', `${candidate}^{commit}`]).status).not.toBe(0); // a fresh workbench
    } finally {
      await side.stop('SIGKILL');
    }
    // Restarted within the same trial: its own state stands, the session is not applied twice.
    const again = await startSidecar(r);
    try {
      expect(again.log()).toContain('is not applied again');
      expect(await budgets(again.url)).toEqual({ train: 4, validation: 2 });
      const fin = await finalizeAsVerifier(again, r);
      expect(fin.status).toBe(200);
      expect(fin.json).toMatchObject({ commit: candidate, rewards: { reward: 1 } });
    } finally {
      await again.stop();
    }
  });

  test('`vero run --resume-from`: a session dir or a tar archive of it is checked and handed to the compose file', async () => {
    const task = path.join(s.dir, 'task');
    const archive = path.join(tempDir(), 'session.tar.gz');
    await tar.c({ gzip: true, file: archive, cwd: path.dirname(session) }, [path.basename(session)]);
    for (const from of [session, archive]) {
      const r = spawnSync(VERO, ['run', task, '--print', '--resume-from', from, '--', '-a', 'oracle'], { encoding: 'utf8' });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      const staged = new RegExp(`^export ${RESUME_SESSION_ENV}=(\\S+)$`, 'm').exec(r.stdout)![1]!;
      expect(fs.readFileSync(path.join(staged, 'ledger.json'), 'utf8')).toBe(fs.readFileSync(path.join(session, 'ledger.json'), 'utf8'));
      fs.rmSync(path.dirname(staged), { recursive: true });
    }
  });

  describe('a bad or foreign session is refused on the host, naming what is wrong', () => {
    const want = () => ({
      task_name: s.cfg.task_name,
      build_digest: fs.readFileSync(s.cfg.paths.build_digest!, 'utf8').trim(),
      base_commit: s.cfg.base_commit,
      seal_key: readSealKey(s.cfg.paths.ledger_seal_key),
    });
    /** A copy of the session, changed by `change`. */
    const broken = (change: (dir: string) => void) => {
      const dir = path.join(tempDir(), 'vero-session');
      fs.cpSync(session, dir, { recursive: true });
      change(dir);
      return dir;
    };
    const editManifest = (dir: string, edit: (m: Record<string, unknown>) => void) => {
      const file = path.join(dir, 'session.json');
      const m = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
      edit(m);
      fs.writeFileSync(file, JSON.stringify(m));
    };

    test.each([
      [
        'another task',
        (d: string) => editManifest(d, (m) => (m.task_name = 'someone/else')),
        'task_name "someone/else" is not this task\'s',
      ],
      ['another build', (d: string) => editManifest(d, (m) => (m.build_digest = 'a'.repeat(64))), 'is of another build'],
      ['a newer schema', (d: string) => editManifest(d, (m) => (m.schema_version = 2)), 'written by a newer vero'],
      ['a corrupt ledger', (d: string) => fs.appendFileSync(path.join(d, 'ledger.json'), ' '), 'ledger.json: its SHA-256 is not the one'],
      ['a missing file', (d: string) => fs.rmSync(path.join(d, 'candidates.bundle')), 'candidates.bundle: missing'],
      ['a file it does not list', (d: string) => fs.writeFileSync(path.join(d, 'extra.json'), '{}'), 'extra.json: not listed'],
      ['no manifest', (d: string) => fs.rmSync(path.join(d, 'session.json')), 'no session.json'],
    ])('%s', (_what, change, problem) => {
      const dir = broken(change);
      expect(checkSessionDir(dir, want()).problems.join('\n')).toContain(problem);
    });

    test('a well-formed ledger of the wrong shape (its digest updated too) is named by field', () => {
      const dir = broken((d) => {
        fs.writeFileSync(path.join(d, 'ledger.json'), JSON.stringify({ schema_version: 1, budgets: {} }));
        const sha = require('node:crypto')
          .createHash('sha256')
          .update(fs.readFileSync(path.join(d, 'ledger.json')))
          .digest('hex') as string;
        editManifest(d, (m) => ((m.files as Record<string, string>)['ledger.json'] = sha));
      });
      expect(checkSessionDir(dir, want()).problems.join('\n')).toMatch(/ledger\.json.*reservations/);
    });

    test('a ledger edited consistently (a reservation removed, what is left raised to match, its digest updated) is refused by its seal', () => {
      const dir = broken((d) => {
        const file = path.join(d, 'ledger.json');
        const l = JSON.parse(fs.readFileSync(file, 'utf8')) as {
          budgets: Record<string, { remaining_run_budget: number | null; remaining_sample_budget: number | null }>;
          reservations: { split: string; n: number }[];
        };
        const gone = l.reservations.shift()!;
        l.budgets[gone.split]!.remaining_run_budget! += 1;
        if (l.budgets[gone.split]!.remaining_sample_budget !== null) l.budgets[gone.split]!.remaining_sample_budget! += gone.n;
        fs.writeFileSync(file, JSON.stringify(l));
        const sha = require('node:crypto').createHash('sha256').update(fs.readFileSync(file)).digest('hex') as string;
        editManifest(d, (m) => ((m.files as Record<string, string>)['ledger.json'] = sha));
      });
      expect(checkSessionDir(dir, { ...want(), budgets: s.cfg.budgets }).problems).toEqual([
        expect.stringMatching(/^ledger\.seal: the session's seal does not match/),
      ]);
      const r = spawnSync(VERO, ['run', path.join(s.dir, 'task'), '--harbor', '/nonexistent/harbor', '--resume-from', dir], {
        encoding: 'utf8',
      });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain("ledger.seal: the session's seal does not match");
    });

    test('vero run exits 2 before harbor starts, with every problem listed', () => {
      const dir = broken((d) => {
        editManifest(d, (m) => (m.task_name = 'someone/else'));
        fs.appendFileSync(path.join(d, 'candidates.json'), ' ');
      });
      const r = spawnSync(VERO, ['run', path.join(s.dir, 'task'), '--harbor', '/nonexistent/harbor', '--resume-from', dir], {
        encoding: 'utf8',
      });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('refusing to resume');
      expect(r.stderr).toContain('task_name "someone/else"');
      expect(r.stderr).toContain('candidates.json: its SHA-256');
      expect(r.stderr).not.toContain('launcher not found'); // harbor was never started
    });

    test('the sidecar itself refuses to start from one (it checks again)', async () => {
      const r = await relaunch(
        s,
        broken((d) => fs.appendFileSync(path.join(d, 'ledger.json'), ' ')),
      );
      const p = spawnSync(VERO, ['serve', '--config', r.serveFile, '--address', address(), '--task-queue', r.queue], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(p.status).toBe(2);
      expect(p.stderr).toContain('the rescued session cannot be resumed');
      expect(fs.existsSync(path.join(r.cfg.paths.admin_volume, 'ledger.json'))).toBe(false);
    });
  });
});
