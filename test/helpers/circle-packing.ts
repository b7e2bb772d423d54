/**
 * vero's harbor-circle-packing example (test/fixtures/vero, unchanged) for the tests: a copy whose seed program is a
 * git repo, and candidate programs an optimizer might commit (a better valid packing, one that breaks `valid == 1`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT, tempDir } from './fixtures';
import { git } from './sidecar';

export const CIRCLE_EXAMPLE = path.join(ROOT, 'test', 'fixtures', 'vero', 'examples', 'harbor-circle-packing');

/** The seed's sum of radii as vero's harness computes it (its README: "the baseline scores ~0.96"). */
export const SEED_SUM_RADII = 0.9597642169962064;

/**
 * A copy of the example whose environment/agent-seed is a git repo with the seed committed (vero copies the tree;
 * ours takes a committed HEAD). Returns the build file.
 */
export function circleExample(): string {
  const dir = path.join(tempDir('vero-circle-'), 'harbor-circle-packing');
  fs.cpSync(CIRCLE_EXAMPLE, dir, { recursive: true });
  const seed = path.join(dir, 'environment', 'agent-seed');
  git(seed, 'init', '-q');
  git(seed, 'add', '-A');
  git(seed, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'seed');
  return path.join(dir, 'build.yaml');
}

/** A valid packing: a 5×5 grid of radius 0.0999 and a 26th circle of radius 0 in a corner (sum 2.4975). */
export const GRID_PACKING = `
def run_packing():
    centers = [[0.1 + 0.2 * i, 0.1 + 0.2 * j] for i in range(5) for j in range(5)] + [[0.0, 0.0]]
    radii = [0.0999] * 25 + [0.0]
    return centers, radii, sum(radii)
`;
export const GRID_SUM_RADII = 0.0999 * 25;

/** A packing with a higher sum whose circles overlap: it breaks the constraint `valid == 1`. */
export const OVERLAPPING_PACKING = `
def run_packing():
    centers = [[0.5, 0.5]] * 26
    radii = [0.2] * 26
    return centers, radii, sum(radii)
`;
