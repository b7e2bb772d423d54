/**
 * The workflow bundle `npm run build` makes (worker/workflow-bundle.ts): a spawned `vero worker` runs an
 * evaluation on it without bundling at start, and a bundle whose inputs changed is never used.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { prepareEvalInput } from '../../client/eval-input';
import { startOrAttach } from '../../client/eval-start';
import { loadEvalConfig } from '../../infra/eval-config-file';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import { buildWorkflowBundle, prebuiltWorkflowBundle } from '../../worker/workflow-bundle';
import { evalFixture, ROOT, tempDir } from '../helpers/fixtures';
import { spawnWorker } from '../helpers/process';
import { address, client, uniqueQueue } from '../helpers/temporal';

jest.setTimeout(120_000);

interface Manifest {
  inputs: { path: string; sha256: string }[];
  sources: { path: string; sha256: string }[];
}

describe('a bundle built into a directory of its own', () => {
  let dir: string;
  const manifestFile = () => path.join(dir, 'workflow-bundle.json');
  const manifest = () => JSON.parse(fs.readFileSync(manifestFile(), 'utf8')) as Manifest;
  let original: string;

  beforeAll(async () => {
    dir = tempDir('vero-bundle-');
    await buildWorkflowBundle(ROOT, dir);
    original = fs.readFileSync(manifestFile(), 'utf8');
  });
  afterEach(() => fs.writeFileSync(manifestFile(), original));

  test('records what webpack read: the compiled workflows, their TypeScript sources and the SDK', () => {
    const m = manifest();
    const inputs = m.inputs.map((i) => i.path);
    expect(inputs).toContain(path.join('dist', 'workflows', 'evaluate-candidate.js'));
    expect(inputs).toContain(path.join('dist', 'model', 'evaluation', 'task-result.js'));
    expect(inputs.some((p) => p.startsWith(path.join('node_modules', '@temporalio', 'workflow')))).toBe(true);
    expect(m.sources.map((s) => s.path)).toContain(path.join('workflows', 'evaluate-candidate.ts'));
    expect(prebuiltWorkflowBundle({ dir, checkSources: true })).toEqual({ codePath: path.join(dir, 'workflow-bundle.js') });
  });

  test('a compiled input that changed makes it stale, naming the file', () => {
    const m = manifest();
    const chunk = m.inputs.find((i) => i.path === path.join('dist', 'workflows', 'evaluate-chunk.js'))!;
    chunk.sha256 = '0'.repeat(64);
    fs.writeFileSync(manifestFile(), JSON.stringify(m));
    expect(prebuiltWorkflowBundle({ dir })).toEqual({ stale: `${chunk.path} changed since the workflow bundle was built` });
  });

  test('an edited TypeScript source makes it stale for the tests (which run the sources), not for dist', () => {
    const m = manifest();
    m.sources.find((s) => s.path === path.join('model', 'evaluation', 'task-result.ts'))!.sha256 = '0'.repeat(64);
    fs.writeFileSync(manifestFile(), JSON.stringify(m));
    expect(prebuiltWorkflowBundle({ dir })).toHaveProperty('codePath');
    expect(prebuiltWorkflowBundle({ dir, checkSources: true })).toEqual({
      stale: `${path.join('model', 'evaluation', 'task-result.ts')} changed since the workflow bundle was built`,
    });
  });

  test('no manifest, or no bundle: stale, saying which', () => {
    fs.rmSync(path.join(dir, 'workflow-bundle.js'));
    expect(prebuiltWorkflowBundle({ dir })).toEqual({ stale: `${path.join(dir, 'workflow-bundle.js')} is missing` });
    fs.rmSync(manifestFile());
    expect(prebuiltWorkflowBundle({ dir })).toMatchObject({ stale: expect.stringContaining('npm run build makes it') });
  });
});

test('a spawned `vero worker` runs an evaluation on the built bundle, without bundling at start', async () => {
  // `npm test` builds first; the worker runs from dist and checks dist's manifest.
  expect(prebuiltWorkflowBundle()).toHaveProperty('codePath');
  const q = uniqueQueue('bundle');
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    scenario: { default: { reward: 1 } },
    tasks: { names: ['hello-world', 'count-words'] },
  });
  const { handle } = await startOrAttach(await client(), await prepareEvalInput(loadEvalConfig(f.configFile), 'improved'), q);
  const worker = spawnWorker(address(), q); // logs at INFO: the SDK says "Workflow bundle created" when it bundles
  try {
    const r = (await handle.result()) as CandidateResult;
    expect(r).toMatchObject({ nScored: 2, score: 1 });
  } finally {
    worker.kill('SIGTERM');
  }
  expect(fs.readFileSync(worker.log, 'utf8')).not.toMatch(/Workflow bundle created/);
});

test('VERO_WORKFLOW_BUNDLE=0: a spawned `vero worker` bundles at start, and still runs the evaluation', async () => {
  const q = uniqueQueue('bundle-off');
  const f = evalFixture({ taskQueue: q, address: address(), scenario: { default: { reward: 1 } }, tasks: { names: ['hello-world'] } });
  const { handle } = await startOrAttach(await client(), await prepareEvalInput(loadEvalConfig(f.configFile), 'improved'), q);
  const worker = spawnWorker(address(), q, { VERO_WORKFLOW_BUNDLE: '0' });
  try {
    expect(await handle.result()).toMatchObject({ nScored: 1, score: 1 });
  } finally {
    worker.kill('SIGTERM');
  }
  expect(fs.readFileSync(worker.log, 'utf8')).toMatch(/Workflow bundle created/);
});
