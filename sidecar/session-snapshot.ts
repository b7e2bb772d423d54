/**
 * The sidecar's session, taken and given back. `vero snapshot` (the task's collect step, before the verifier
 * and when a trial fails) writes what a relaunch needs into one dir that Harbor rescues as `vero-session/`: the
 * ledger, the candidates registry, the submission, the evaluation jobs, early stop's records, the gateway's meter, what the optimizer
 * was shown (its results files: the disclosure record) and the candidates' commits as a git bundle, with a
 * manifest. A relaunched `vero serve` restores it into an empty session dir, after checking it again.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileDurable, writeJsonDurable } from '../infra/atomic-file';
import { git } from '../infra/git';
import { ConfigError } from '../model/errors';
import type { ServeConfig } from '../model/compiled-task/serve-config';
import {
  COMMITS_BUNDLE,
  partOf,
  SESSION_MANIFEST,
  SESSION_SCHEMA_VERSION,
  type SessionExpectation,
  type SessionManifest,
} from '../model/compiled-task/session-snapshot';
import { checkSessionDir, sessionRecords } from './session-check';
import { LEDGER_SEAL, readSealKey, sealSessionIn } from './ledger-seal';

/** What a relaunch of this sidecar must match: its task, the digest its image was built with, and its budgets. */
function expectationOf(
  cfg: ServeConfig,
): SessionExpectation & { base_commit: string; budgets: ServeConfig['budgets']; seal_key: Buffer | null } {
  const file = cfg.paths.build_digest;
  const digest = file && fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : null;
  const seal_key = readSealKey(cfg.paths.ledger_seal_key);
  return { task_name: cfg.task_name, build_digest: digest || null, base_commit: cfg.base_commit, budgets: cfg.budgets, seal_key };
}

/** The files of a session and where they live now (relative path in the session → absolute path). */
function sources(cfg: ServeConfig): Map<string, string> {
  const out = new Map<string, string>();
  const admin = cfg.paths.admin_volume;
  for (const f of ['ledger.json', 'candidates.json', 'submission.json', 'finalize.json', 'gateway/meter.json', 'gateway/meter.json.log'])
    if (fs.existsSync(path.join(admin, f))) out.set(f, path.join(admin, f));
  for (const sub of ['eval-jobs', 'early-stop/runs', 'early-stop/scores']) {
    const dir = path.join(admin, sub);
    if (fs.existsSync(dir)) for (const f of fs.readdirSync(dir)) out.set(`${sub}/${f}`, path.join(dir, f));
  }
  const results = path.join(cfg.paths.agent_volume, 'results');
  if (fs.existsSync(results))
    for (const d of fs.readdirSync(results))
      for (const f of fs.existsSync(path.join(results, d)) ? fs.readdirSync(path.join(results, d)) : [])
        out.set(`disclosed/${d}/${f}`, path.join(results, d, f));
  for (const rel of [...out.keys()]) if (!partOf(rel)) out.delete(rel); // temp files of a write in flight, and the like
  return out;
}

/** Writes the session into `outDir` (replaced whole); returns its manifest. */
export async function takeSnapshot(cfg: ServeConfig, outDir: string): Promise<SessionManifest> {
  const tmp = `${outDir}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true, mode: 0o700 });
  const files: Record<string, string> = {};
  for (const [rel, from] of sources(cfg)) {
    const data = fs.readFileSync(from);
    writeFileDurable(path.join(tmp, rel), data, { mode: 0o600, fsync: false });
    files[rel] = createHash('sha256').update(data).digest('hex');
  }
  const refs = await git(['-C', cfg.repo_path, 'for-each-ref', '--format=%(refname)', 'refs/vero/candidates/']).catch(() => '');
  if (refs.trim()) {
    const bundle = path.join(tmp, COMMITS_BUNDLE);
    await git(['-C', cfg.repo_path, 'bundle', 'create', '--quiet', bundle, ...refs.split('\n').filter(Boolean)]);
    files[COMMITS_BUNDLE] = createHash('sha256').update(fs.readFileSync(bundle)).digest('hex');
  }
  // Sealed last: the seal covers every other file's digest.
  const seal = sealSessionIn(tmp, readSealKey(cfg.paths.ledger_seal_key), cfg.task_name, files);
  if (seal) files[LEDGER_SEAL] = createHash('sha256').update(seal).digest('hex');
  const manifest: SessionManifest = {
    tool: 'vero-harbor session',
    schema_version: SESSION_SCHEMA_VERSION,
    task_name: cfg.task_name,
    build_digest: expectationOf(cfg).build_digest,
    taken_at: new Date().toISOString(),
    files,
  };
  writeJsonDurable(path.join(tmp, SESSION_MANIFEST), manifest, { mode: 0o600 });
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.renameSync(tmp, outDir);
  return manifest;
}

/**
 * Applies the rescued session in `cfg.paths.resume_dir` to a session dir with no state yet (a restarted sidecar
 * of the same trial keeps its own, newer state). The ledger is written last: its presence means the restore is
 * complete, so a sidecar that dies half-way restores again. A session that fails its check stops the start.
 */
export async function restoreSession(cfg: ServeConfig, log: (line: string) => void): Promise<boolean> {
  const dir = cfg.paths.resume_dir;
  if (!dir || !fs.existsSync(path.join(dir, SESSION_MANIFEST))) return false;
  const admin = cfg.paths.admin_volume;
  if (fs.existsSync(path.join(admin, 'ledger.json'))) {
    log(`the session dir already has state: the rescued session in ${dir} was applied before, and is not applied again`);
    return false;
  }
  const { manifest, problems } = checkSessionDir(dir, expectationOf(cfg));
  if (problems.length || !manifest)
    throw new ConfigError(`${dir}: the rescued session cannot be resumed:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  const rels = Object.keys(manifest.files).sort((a, b) => Number(a === 'ledger.json') - Number(b === 'ledger.json'));
  for (const rel of rels) {
    const from = path.join(dir, rel);
    const part = partOf(rel);
    if (part === 'admin') writeFileDurable(path.join(admin, rel), fs.readFileSync(from), { mode: 0o600 });
    else if (part === 'disclosed')
      writeFileDurable(path.join(cfg.paths.agent_volume, 'results', rel.slice('disclosed/'.length)), fs.readFileSync(from));
    else if (part === 'commits')
      await git(['-C', cfg.repo_path, 'fetch', '--quiet', '--no-tags', from, 'refs/vero/candidates/*:refs/vero/candidates/*']);
  }
  const evaluations = sessionRecords(dir, manifest.files).length;
  log(`resumed the session taken at ${manifest.taken_at}: ${evaluations} recorded evaluation(s), the ledger and the gateway's meter`);
  return true;
}
