/**
 * A build's digest: the SHA-256 of what defines the task (every file of the task dir but the tools it carries:
 * vero's own package, the Temporal CLI, the Harbor wheels). Recompiling the same build.yaml on the same agent
 * repo, dataset and scorer gives the same digest (with a newer vero too); a changed input gives another. A
 * rescued session records it, and a relaunch resumes only a session of the same digest.
 */
import { createHash } from 'node:crypto';
import { CONTEXT } from './containers';

const TOOLING = [`environment/${CONTEXT.veroPackage}`, `environment/${CONTEXT.temporalCli}`, `environment/${CONTEXT.wheelhouse}/`];
export const BUILD_DIGEST_FILE = `environment/${CONTEXT.buildDigest}`;

const isTooling = (rel: string) =>
  rel === BUILD_DIGEST_FILE ||
  rel === `environment/${CONTEXT.ledgerSealKey}` ||
  TOOLING.some((t) => (t.endsWith('/') ? rel.startsWith(t) : rel === t));

/** The digest of a task dir's files (path → SHA-256), over the files that define the task. */
export function buildDigestOf(files: [string, string][]): string {
  const h = createHash('sha256');
  for (const [rel, sha] of [...files].filter(([rel]) => !isTooling(rel)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    h.update(`${rel}\0${sha}\n`);
  return h.digest('hex');
}
