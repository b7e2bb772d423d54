/**
 * vero's examples/harbor-circle-packing, compiled from vero's own build.yaml (test/fixtures/vero, unchanged; its
 * `${optimizer_model}` given), run as its user runs it: real `harbor run -p <task> -e docker` with Harbor's oracle.
 * The oracle's solve script is an optimizer: it commits a better packing.py (a valid 5×5 grid) and one with a higher
 * sum whose circles overlap (it breaks `valid == 1`), evaluating each on the selection split through `vero eval`.
 * The sidecar's command harness (vero's evaluate.py, baked into the sidecar) scores them; finalize re-scores the
 * shortlist and scores the chosen candidate on `test`. The reward is the harness's sum_radii of the valid grid,
 * higher than the seed's known score; the overlapping candidate, though its sum is higher, is never chosen.
 *
 * This machine's adaptation (no image registry), as in vero-conformance.test.ts: the build's FROM lines name
 * `debian:trixie-slim` (vero-harbor's default base image for a vero file that sets none); for the run the local
 * engine gets that name as a tag of the offline vero-base:trixie-dind, removed afterwards (a name the engine
 * already holds is used as it is and left alone).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildTaskDir } from '../../compiler/compile';
import { runCompiledTask } from '../../harbor/compiled-task-run';
import { dockerObjects, harborBin, describeOrFail, realHarborUnavailable } from '../helpers/real-harbor';
import { circleExample, GRID_PACKING, GRID_SUM_RADII, OVERLAPPING_PACKING, SEED_SUM_RADII } from '../helpers/circle-packing';

const IMAGE = 'vero-base:trixie-dind';
const unavailable =
  realHarborUnavailable() ?? (dockerObjects().includes(`image ${IMAGE}`) ? null : `the task base image ${IMAGE} is missing`);
const realDescribe = describeOrFail(unavailable);

jest.setTimeout(20 * 60_000);

const BASE_NAME = 'debian:trixie-slim';

/** The optimizer the oracle runs: two commits, each evaluated on the selection split (`vero eval`). */
const solveScript = (): string =>
  [
    '#!/bin/bash',
    'set -euo pipefail',
    'cd /workspace/agent',
    'commit() { cat > packing.py; git add packing.py; git -c user.name=oracle -c user.email=oracle@localhost commit -qm "$1"; vero eval --split validation; }',
    `commit "a 5x5 grid" <<'EOF'\n${GRID_PACKING.trim()}\nEOF`,
    `commit "overlapping circles" <<'EOF'\n${OVERLAPPING_PACKING.trim()}\nEOF`,
    'vero budget',
    '',
  ].join('\n');

realDescribe('vero’s harbor-circle-packing on real Harbor and Docker', () => {
  const before = unavailable ? [] : dockerObjects();
  let tagged = false;

  beforeAll(() => {
    if (!before.includes(`image ${BASE_NAME}`)) {
      execFileSync('docker', ['tag', IMAGE, BASE_NAME]);
      tagged = true;
    }
  });
  afterAll(() => {
    if (tagged) execFileSync('docker', ['image', 'rm', BASE_NAME], { stdio: 'ignore' });
    // Harbor removes the trial's containers, networks, volumes and built images; the tag is gone: nothing is left.
    if (!unavailable) expect(dockerObjects()).toEqual(before);
  });

  test('the oracle optimizer: the reward is the harness’s sum_radii of the valid better packing; the one breaking valid == 1 is never chosen', async () => {
    const build = circleExample();
    const dir = path.dirname(path.dirname(build));
    const taskDir = path.join(dir, 'task');
    await buildTaskDir(build, taskDir, { skipSecretCheck: true, linkRuntime: true, params: { optimizer_model: 'gpt-5.4-mini' } });
    fs.writeFileSync(path.join(taskDir, 'solution', 'solve.sh'), solveScript(), { mode: 0o755 });

    const o = await runCompiledTask({
      harbor: harborBin(),
      taskDir,
      jobsDir: path.join(dir, 'jobs'),
      jobName: 'oracle',
      agent: { kind: 'oracle' },
      // The gateway's upstream key (vero's default OPENAI_API_KEY): required to start, never called here.
      env: { OPENAI_API_KEY: 'sk-circle-packing-unused' },
    });
    expect({ exitCode: o.exitCode, exception: o.exception, reward: o.reward }).toEqual({
      exitCode: 0,
      exception: null,
      reward: { sum_radii: GRID_SUM_RADII },
    });
    expect(GRID_SUM_RADII).toBeGreaterThan(SEED_SUM_RADII);
    const fin = o.finalize! as unknown as {
      commit: string;
      candidates: { commit: string; split: string; mean_score: number; violations?: string[] }[];
      objective: unknown;
      shortlist: unknown;
    };
    const [grid, overlapping] = fin.candidates.map((c) => [c.split, c.mean_score, c.violations ?? []]);
    expect(grid).toEqual(['validation', GRID_SUM_RADII, []]);
    expect(overlapping).toEqual(['validation', 5.2, ['valid == 1 (observed 0)']]);
    expect(fin.commit).toBe(fin.candidates[0]!.commit);
    expect(fin.objective).toEqual({ metric: 'sum_radii', direction: 'maximize', constraints: ['valid == 1'] });
    expect(fin.shortlist).toEqual([{ commit: fin.commit, recorded: GRID_SUM_RADII, rescored: GRID_SUM_RADII }]);
  });
});
