/** The rules that keep every workflow history of an evaluation bounded (model/evaluation/history-bounds.ts). */
import { evalInputFor, settingsFrom } from '../../client/eval-input';
import { ConfigError } from '../../model/errors';
import { EvalConfigFile } from '../../model/evaluation/config';
import {
  chunksPerRun,
  inputSizeProblem,
  MAX_INPUT_BYTES,
  PARENT_EVENT_BUDGET,
  parentEventsPerChunk,
} from '../../model/evaluation/history-bounds';

test('a run of the parent holds as many chunks as fit its event budget at the concurrency, at least one', () => {
  expect(chunksPerRun(8)).toBe(166);
  expect(chunksPerRun(16)).toBe(111);
  expect(chunksPerRun(64)).toBe(37);
  expect(chunksPerRun(1000)).toBe(2);
  for (const c of [1, 4, 8, 32, 100, 1000]) expect(chunksPerRun(c) * parentEventsPerChunk(c)).toBeLessThanOrEqual(PARENT_EVENT_BUDGET);
  expect(chunksPerRun(8, 3)).toBe(3); // execution.chunks_per_run wins
  // A spend-capped evaluation records each task's spend report too: chunks of 500 at concurrency 4.
  expect(chunksPerRun(4, undefined, { chunkSize: 500, pooled: false })).toBe(3);
  expect(chunksPerRun(4, undefined, { chunkSize: 500, pooled: true })).toBe(2);
  expect(chunksPerRun(4, undefined, { chunkSize: 1000, pooled: true })).toBe(1);
  // Chunks that report their progress to the parent (at most 20 signals each): 116 events per chunk at 4.
  expect(chunksPerRun(4, undefined, undefined, true)).toBe(68);
  for (const c of [1, 4, 64])
    expect(chunksPerRun(c, undefined, undefined, true) * parentEventsPerChunk(c, undefined, true)).toBeLessThanOrEqual(PARENT_EVENT_BUDGET);
});

test('an input whose task names do not fit one payload is refused with its size and how to split it', () => {
  const names = (n: number, len: number) => Array.from({ length: n }, (_, i) => `t${String(i).padStart(len - 1, '0')}`);
  expect(inputSizeProblem(names(100_000, 12))).toBeNull(); // 1.43 MiB of JSON
  const problem = inputSizeProblem(names(60_000, 30));
  expect(problem).toMatch(/^the names of 60000 tasks take 1\.9 MiB, more than the 1\.5 MiB .*tasks\.names or tasks\.include/);
  expect(new TextEncoder().encode(JSON.stringify(names(60_000, 30))).length).toBeGreaterThan(MAX_INPUT_BYTES);
});

test('evalInputFor refuses such an input as a config error, before anything starts', () => {
  const cfg = {
    ...EvalConfigFile.parse({ agent_repo: '/r', tasks: { source: { path: '/d' } }, harbor: { agent: 'a:B' } }),
    home: '/h',
    configFile: null,
  };
  const parts = { commit: 'a'.repeat(40), candidateRef: 'x', agentRepo: '/r', home: '/h', settings: settingsFrom(cfg) };
  const many = Array.from({ length: 60_000 }, (_, i) => `task-with-a-rather-long-name-${i}`);
  expect(() => evalInputFor({ ...parts, tasks: many })).toThrow(ConfigError);
  expect(() => evalInputFor({ ...parts, tasks: many })).toThrow(/^tasks: the names of 60000 tasks take/);
  expect(evalInputFor({ ...parts, tasks: ['a', 'b'] }).settings.chunkSize).toBe(500);
});
