/**
 * The scoring rules' version is part of an evaluation's identity (model/harbor/trial-ranking.ts
 * SCORING_RULES_VERSION): a change of the rules is another evaluation for `vero start-eval` (another workflow id:
 * no attach to one scored under the old rule), and another config digest, which `vero compare` warns about and
 * `vero best` and `vero race` select their evaluations by. Version 1 leaves the digest as it was before the
 * version existed, so the evaluations already run keep their ids.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadEvalConfig } from '../../infra/eval-config-file';
import { configDigest, evalWorkflowId } from '../../model/evaluation/identity';
import { SCORING_RULES_VERSION } from '../../model/harbor/trial-ranking';
import { settingsFrom } from '../../client/eval-input';
import { DATASET, tempDir } from '../helpers/fixtures';

function settings() {
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'vero.yaml'), `agent_repo: ./repo\ntasks:\n  source:\n    path: ${DATASET}\n`);
  // A fixed source, so the digest does not depend on where the checkout is.
  return { ...settingsFrom(loadEvalConfig(path.join(dir, 'vero.yaml'))), source: { path: '/data/ds' } };
}

const TASKS = ['count-words', 'hello-world'];
const COMMIT = 'a'.repeat(40);

test('the rules evaluations were scored by so far are version 1, and leave their ids as they were', () => {
  expect(SCORING_RULES_VERSION).toBe(1);
  // The digest of these settings before the version existed.
  expect(configDigest(TASKS, settings())).toBe('6607c0128b2fdbe816ee9dde8ea583a8b15aca71a775ca385dd96a695a52fd62');
});

test('a change of the scoring rules is another evaluation: another id and another config digest', () => {
  const s = settings();
  const today = configDigest(TASKS, s);
  const changed = configDigest(TASKS, s, SCORING_RULES_VERSION + 1);
  expect(changed).not.toBe(today);
  expect(evalWorkflowId(COMMIT, changed)).not.toBe(evalWorkflowId(COMMIT, today));
  // Each version is its own identity, and the same version the same one.
  expect(configDigest(TASKS, s, 3)).not.toBe(changed);
  expect(configDigest(TASKS, settings(), SCORING_RULES_VERSION + 1)).toBe(changed);
});
