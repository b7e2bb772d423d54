/**
 * A case's transcript feedback, from a Harbor job dir on disk: the first trial's transcript in vero's order, never
 * through a symlink; its tail cut at a character boundary, after every secret is redacted, even one the cut
 * would have split.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { redactedTail, redactSecrets, tailMargin } from '../../model/compiled-task/redact-secrets';
import { caseFeedback } from '../../sidecar/case-feedback';
import { tempDir } from '../helpers/fixtures';

const SPEC = { transcripts: true, max_bytes: 100, attempt_detail: true };

/** A job dir with trials of `task`: each with its finish time, reward and agent files. */
function jobDir(task: string, trials: { name: string; finished: string; reward?: number; files: Record<string, string> }[]): string {
  const dir = tempDir('vero-feedback-');
  fs.writeFileSync(path.join(dir, 'config.json'), '{}');
  fs.writeFileSync(path.join(dir, 'lock.json'), '{}');
  for (const t of trials) {
    const trial = path.join(dir, t.name);
    fs.mkdirSync(path.join(trial, 'agent'), { recursive: true });
    const result = {
      task_name: task,
      trial_name: t.name,
      task_id: { path: `/tasks/${task}` },
      finished_at: t.finished,
      verifier_result: t.reward === undefined ? null : { rewards: { reward: t.reward } },
    };
    fs.writeFileSync(path.join(trial, 'result.json'), JSON.stringify(result));
    for (const [rel, text] of Object.entries(t.files)) fs.writeFileSync(path.join(trial, rel), text);
  }
  return dir;
}

test('the first finished trial with a transcript; the pane before the trajectory; each trial’s detail', () => {
  const dir = jobDir('t', [
    { name: 't__bbbbbbb', finished: '2026-01-01T00:00:02Z', reward: 0, files: { 'agent/trajectory.json': 'second' } },
    { name: 't__ccccccc', finished: '2026-01-01T00:00:01Z', files: { 'agent/oracle.txt': 'not a transcript' } },
    {
      name: 't__aaaaaaa',
      finished: '2026-01-01T00:00:03Z',
      reward: 1,
      files: { 'agent/terminus_2.pane': 'pane', 'agent/trajectory.json': 'x' },
    },
  ]);
  expect(caseFeedback(dir, 't', { spec: SPEC, failed: true, secrets: [], rewardKey: null })).toEqual({
    feedback: 'second',
    attempts: [
      { trial: 't__ccccccc', reward: null, exception: null },
      { trial: 't__bbbbbbb', reward: 0, exception: null },
      { trial: 't__aaaaaaa', reward: 1, exception: null },
    ],
  });
  // A solved case has no transcript; without attempt_detail, nothing at all.
  expect(caseFeedback(dir, 't', { spec: SPEC, failed: false, secrets: [], rewardKey: null }).feedback).toBeUndefined();
  expect(caseFeedback(dir, 't', { spec: { ...SPEC, attempt_detail: false }, failed: false, secrets: [], rewardKey: null })).toEqual({});
  // max_bytes 0: no transcript.
  expect(caseFeedback(dir, 't', { spec: { ...SPEC, max_bytes: 0 }, failed: true, secrets: [], rewardKey: null }).feedback).toBeUndefined();
});

test('a transcript that is a symlink, or in an agent dir that leads out of the trial, is not read', () => {
  const outside = path.join(tempDir('vero-outside-'), 'secret.txt');
  fs.writeFileSync(outside, 'the sidecar’s own file');
  const dir = jobDir('t', [{ name: 't__aaaaaaa', finished: '2026-01-01T00:00:01Z', reward: 0, files: {} }]);
  fs.symlinkSync(outside, path.join(dir, 't__aaaaaaa', 'agent', 'trajectory.json'));
  expect(caseFeedback(dir, 't', { spec: SPEC, failed: true, secrets: [], rewardKey: null }).feedback).toBeUndefined();
  const agent = path.join(dir, 't__aaaaaaa', 'agent');
  fs.rmSync(agent, { recursive: true });
  fs.mkdirSync(path.join(path.dirname(outside), 'agent'));
  fs.writeFileSync(path.join(path.dirname(outside), 'agent', 'trajectory.json'), 'outside');
  fs.symlinkSync(path.join(path.dirname(outside), 'agent'), agent);
  expect(caseFeedback(dir, 't', { spec: SPEC, failed: true, secrets: [], rewardKey: null }).feedback).toBeUndefined();
});

test('redaction: values as written and as JSON escapes them, gateway tokens of any scope, short values left alone', () => {
  const token = `vero-producer-${'A'.repeat(43)}`;
  expect(redactSecrets(`a=s3cr"et b="s3cr\\"et" t=${token} c=abc`, ['s3cr"et', 'abc'])).toBe(
    'a=[REDACTED] b="[REDACTED]" t=[REDACTED] c=abc',
  );
});

test('a tail read from the middle of a file drops its front, where a secret may be cut; the cut keeps characters whole', () => {
  const secret = 'SECRET-VALUE-1234567890';
  // The window starts inside the secret: its unmatched end is dropped with the front margin.
  const tail = 'y'.repeat(tailMargin([secret])) + 'end ééé';
  const window = Buffer.from(`${secret.slice(5)}${tail}`);
  const out = redactedTail(window, false, 1000, [secret]);
  expect(out).not.toContain('VALUE-1234567890');
  expect(out.endsWith('end ééé')).toBe(true);
  // 5 bytes would split an é: the cut moves to the next character.
  expect(redactedTail(Buffer.from('ab ééé'), true, 5, [])).toBe('éé');
  expect(redactedTail(Buffer.from(`x ${secret} y`), true, 1000, [secret])).toBe('x [REDACTED] y');
});
