/**
 * A compiled task whose inner tasks come from Harbor's registry, through `vero serve` and Harbor (the stand-in):
 * the build resolves `bench@1.0` in a local registry.json and bakes it in; the sidecar checks the pin when it starts
 * and its Harbor runs `-d bench@1.0 --registry-path …` (not a local dir); a baked task whose files changed does
 * not start.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readRegistryFile } from '../../harbor/dataset-ref';
import { ServeConfig } from '../../model/compiled-task/serve-config';
import { DATASET, tempDir } from '../helpers/fixtures';
import { harborStarts, post, setup, startSidecar } from '../helpers/sidecar';

jest.setTimeout(180_000);

/** mini-bench as `bench@1.0` of a local registry.json, its task paths relative to the file. */
function localRegistry(): string {
  const dir = tempDir('vero-registry-');
  fs.cpSync(DATASET, path.join(dir, 'tasks'), { recursive: true });
  const tasks = fs.readdirSync(DATASET).map((t) => ({ name: t, path: `tasks/${t}` }));
  const file = path.join(dir, 'registry.json');
  fs.writeFileSync(file, JSON.stringify([{ name: 'bench', version: '1.0', description: 'mini-bench', tasks }]));
  return file;
}

test('a registry dataset the build baked in: pinned, checked at start, run by the sidecar’s Harbor with -d and --registry-path', async () => {
  const s = await setup({
    scenario: { tasks: { 'hello-world': { reward: 1 }, 'count-words': { reward: 1 } }, default: { reward: 0 } },
    build: { inner_task: undefined, inner_dataset: { ref: 'bench@1.0', registry_path: localRegistry() } },
  });
  const task = path.join(s.dir, 'task');
  const built = ServeConfig.parse(JSON.parse(fs.readFileSync(path.join(task, 'environment/sidecar/serve.json'), 'utf8')));
  const source = built.mode_b!.task_source as { dataset: string; registry_path: string; digest: string };
  expect(source).toEqual({
    dataset: 'bench@1.0',
    registry_path: '/opt/inner-task/registry.json',
    digest: expect.stringMatching(/^sha256:/),
  });
  // The baked registry as the sidecar's container sees it, at this host's paths.
  const baked = path.join(task, 'environment/sidecar/inner-task');
  const hostRegistry = path.join(s.dir, 'baked-registry.json');
  const entries = readRegistryFile(path.join(baked, 'registry.json'));
  fs.writeFileSync(
    hostRegistry,
    JSON.stringify(entries.map((e) => ({ ...e, tasks: e.tasks.map((t) => ({ ...t, path: path.join(baked, 'tasks', t.name) })) }))),
  );
  s.cfg.mode_b = { ...s.cfg.mode_b!, task_source: { ...source, registry_path: hostRegistry } };
  fs.writeFileSync(s.serveFile, JSON.stringify(s.cfg));

  const side = await startSidecar(s);
  try {
    const r = await post(side.url, '/eval', { split: 'train' });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: 'completed', n_samples: 3, n_errors: 0 });
    expect(r.json.mean_score).toBeCloseTo(2 / 3);
    const starts = harborStarts(s);
    expect(starts.map((i) => i.argv[i.argv.indexOf('-i') + 1]).sort()).toEqual(['count-words', 'hello-world', 'reverse-string']);
    for (const i of starts) {
      expect(i.argv.slice(i.argv.indexOf('-d'), i.argv.indexOf('-d') + 4)).toEqual([
        '-d',
        'bench@1.0',
        '--registry-path',
        expect.any(String),
      ]);
      expect(i.argv).not.toContain('-p');
    }
  } finally {
    await side.stop();
  }

  // A baked task changed after the build: the sidecar refuses to start, naming the pin and what it found.
  fs.appendFileSync(path.join(baked, 'tasks/hello-world/instruction.md'), '\nchanged\n');
  await expect(startSidecar(s)).rejects.toThrow(
    new RegExp(`mode_b\\.task_source: digest mismatch: bench@1\\.0 was pinned at ${source.digest}, but ${hostRegistry} now gives sha256:`),
  );
});
