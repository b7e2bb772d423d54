/**
 * Registry task sources (harbor/dataset-ref.ts): Harbor's dataset references, their digests, a local registry.json
 * (Harbor's --registry-path form) resolving and pinning them at build time, the pin verified again when the
 * sidecar starts, and a legacy dataset built into the task for the sidecar's Harbor to read offline.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml, stringify } from 'yaml';
import { loadBuildConfig } from '../../compiler/build-config';
import { buildTaskDir } from '../../compiler/compile';
import {
  legacyDatasetDigest,
  packageDatasetDigest,
  parseDatasetRef,
  pinDataset,
  readRegistryFile,
  runSourceOf,
} from '../../harbor/dataset-ref';
import { harborArgv } from '../../model/harbor/argv';
import { availableTasks } from '../../harbor/task-source';
import { HarborSection } from '../../model/harbor/config';
import { ServeConfig } from '../../model/compiled-task/serve-config';
import { verifyPinnedSource } from '../../sidecar/serve';
import { agentRepo, DATASET, ROOT, tempDir } from '../helpers/fixtures';
import { runVero } from '../helpers/process';

jest.setTimeout(60_000);

const TASKS = ['add-cli-flag', 'count-words', 'hello-world', 'sum-numbers'];

/** A local registry.json holding mini-bench as `bench@1.0` (paths relative to the file, as a user writes them). */
function localRegistry(): { file: string; dir: string } {
  const dir = tempDir('vero-registry-');
  fs.cpSync(DATASET, path.join(dir, 'tasks'), { recursive: true });
  const file = path.join(dir, 'registry.json');
  const tasks = TASKS.map((t) => ({ name: t, path: `tasks/${t}` }));
  fs.writeFileSync(file, JSON.stringify([{ name: 'bench', version: '1.0', description: 'mini-bench', tasks }], null, 2));
  return { file, dir };
}

function buildFile(over: Record<string, unknown>): string {
  const file = path.join(tempDir(), 'build.yaml');
  fs.writeFileSync(
    file,
    stringify({
      name: 'acme/reg-task',
      agent_repo: agentRepo(),
      mode: 'B',
      harbor: { agent: 'agent:MiniAgent', model: 'anthropic/x' },
      partition: { train: ['hello-world', 'count-words'], validation: ['sum-numbers'], test: ['add-cli-flag'] },
      splits: [
        { split: 'train', access: 'viewable' },
        { split: 'validation', access: 'non_viewable' },
        { split: 'test', access: 'no_access' },
      ],
      selection_split: 'validation',
      targets: [{ split: 'test' }],
      ...over,
    }),
  );
  return file;
}

const loadError = (file: string, registry = {}) => {
  try {
    loadBuildConfig(file, {}, registry);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('the build config loaded');
};

describe('Harbor dataset references', () => {
  test('the two forms, as harbor run -d reads them', () => {
    expect(parseDatasetRef('swebenchpro@1.0')).toEqual({ form: 'legacy', name: 'swebenchpro', version: '1.0' });
    expect(parseDatasetRef('terminal-bench')).toEqual({ form: 'legacy', name: 'terminal-bench' });
    expect(parseDatasetRef(`gaia/gaia@sha256:${'a'.repeat(64)}`)).toEqual({
      form: 'package',
      org: 'gaia',
      name: 'gaia',
      ref: `sha256:${'a'.repeat(64)}`,
    });
    for (const bad of ['a/b/c@1', 'x@', '@1', 'has space@1']) expect(parseDatasetRef(bad)).toBeNull();
  });

  test("a package dataset's digest is Harbor's dataset.toml content hash: vero's gaia manifest hashes to its pin", () => {
    const manifest = JSON.parse(
      fs.readFileSync(path.join(ROOT, 'test/fixtures/vero/harness-engineering-bench/gaia/partitions/manifest.json'), 'utf8'),
    ) as { dataset_version: string; tasks: { ref: string }[] };
    expect(packageDatasetDigest(manifest.tasks.map((t) => t.ref))).toBe(manifest.dataset_version);
  });

  test('a legacy dataset’s digest pins its entry and its task files, not where they are', () => {
    const { file, dir } = localRegistry();
    const [entry] = readRegistryFile(file);
    const digest = legacyDatasetDigest(entry!, dir);
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const moved = tempDir();
    fs.cpSync(path.join(dir, 'tasks'), path.join(moved, 'elsewhere'), { recursive: true });
    const relocated = { ...entry!, tasks: entry!.tasks.map((t) => ({ ...t, path: `elsewhere/${path.basename(t.path)}` })) };
    expect(legacyDatasetDigest(relocated, moved)).toBe(digest);
    fs.appendFileSync(path.join(dir, 'tasks/hello-world/instruction.md'), '\nchanged\n');
    expect(legacyDatasetDigest(entry!, dir)).not.toBe(digest);
  });

  test('an evaluation’s registry source lists the names -i matches, the highest version when none is given', () => {
    const { file } = localRegistry();
    const [entry] = readRegistryFile(file);
    fs.writeFileSync(
      file,
      JSON.stringify([entry, { ...entry, version: '1.10', tasks: entry!.tasks.slice(0, 1) }, { ...entry, version: '1.9' }]),
    );
    expect(availableTasks({ dataset: 'bench@1.0', registry_path: file })).toEqual(TASKS);
    expect(availableTasks({ dataset: 'bench', registry_path: file })).toEqual(['add-cli-flag']);
    expect(() => availableTasks({ dataset: 'bench@2.0', registry_path: file })).toThrow(
      `tasks.source.dataset: ${file} holds bench at version(s) 1.0, 1.10, 1.9, not 2.0`,
    );
    fs.writeFileSync(file, '{');
    expect(() => availableTasks({ dataset: 'bench@1.0', registry_path: file })).toThrow(
      `tasks.source.registry_path: ${file}: not a readable registry.json`,
    );
  });

  test('offline (no registry): recorded as is, a package by its own digest, with a note saying the sidecar resolves it', () => {
    const pkg = pinDataset({ ref: `acme/bench@sha256:${'b'.repeat(64)}` });
    expect(pkg).toMatchObject({ problems: [], resolved: null, source: { digest: `sha256:${'b'.repeat(64)}` } });
    expect(pkg.notes[0]).toMatch(/no local registry .*pinned at sha256:b+.*resolves it from Harbor Hub when the task runs/);
    const legacy = pinDataset({ ref: 'swebenchpro@1.0' });
    expect(legacy.source).toEqual({ ref: 'swebenchpro@1.0' });
    expect(legacy.notes[0]).toMatch(/a version, not pinned to a digest.*Harbor's hosted registry/);
    const url = pinDataset({ ref: 'bench@1.0', registry_url: 'https://r.example/registry.json' });
    expect(url.notes[0]).toMatch(/resolves it from https:\/\/r\.example\/registry\.json when the task runs/);
  });

  test('the sidecar’s harbor gets -d with the pin and the registry flag', () => {
    const harbor = HarborSection.parse({ agent: 'oracle' });
    const argv = (source: ReturnType<typeof runSourceOf>) =>
      harborArgv({ harbor, source, task: 't', jobsDir: '/j', jobName: 't', worktree: '/w' }).join(' ');
    const digest = `sha256:${'c'.repeat(64)}`;
    expect(argv(runSourceOf({ ref: 'bench@1.0', digest }, '/opt/inner-task/registry.json'))).toContain(
      '-d bench@1.0 --registry-path /opt/inner-task/registry.json -i t',
    );
    expect(argv(runSourceOf({ ref: 'bench@1.0', registry_url: 'https://r.example/registry.json' }))).toContain(
      '-d bench@1.0 --registry-url https://r.example/registry.json -i t',
    );
    expect(argv(runSourceOf({ ref: 'acme/bench@sha256:' + 'c'.repeat(64), digest }))).toContain(`-d acme/bench@${digest} -i t`);
  });
});

describe('inner_dataset in build.yaml, with a local registry', () => {
  test('a version is pinned to its digest; partitions are checked against the registry’s tasks', () => {
    const { file: registry, dir } = localRegistry();
    const file = buildFile({ inner_dataset: { ref: 'bench@1.0', registry_path: path.relative(path.dirname(registry), registry) } });
    fs.cpSync(registry, path.join(path.dirname(file), 'registry.json'));
    fs.cpSync(path.join(dir, 'tasks'), path.join(path.dirname(file), 'tasks'), { recursive: true });
    const c = loadBuildConfig(file);
    const [entry] = readRegistryFile(registry);
    expect(c.inner_dataset).toEqual({
      ref: 'bench@1.0',
      registry_path: path.join(path.dirname(file), 'registry.json'),
      digest: legacyDatasetDigest(entry!, dir),
    });
    const unknown = buildFile({
      inner_dataset: { ref: 'bench@1.0', registry_path: registry },
      partition: { train: ['hello-world', 'nope'], validation: ['sum-numbers'], test: ['add-cli-flag'] },
    });
    expect(loadError(unknown)).toContain('partition.train: unknown task name(s) nope (bench@1.0 has: add-cli-flag');
  });

  test('a digest mismatch is refused with both digests named', () => {
    const { file: registry, dir } = localRegistry();
    const [entry] = readRegistryFile(registry);
    const actual = legacyDatasetDigest(entry!, dir);
    const wrong = `sha256:${'0'.repeat(64)}`;
    const file = buildFile({ inner_dataset: { ref: 'bench@1.0', registry_path: registry, digest: wrong } });
    expect(loadError(file)).toContain(
      `inner_dataset: digest mismatch: bench@1.0 was pinned at ${wrong}, but ${registry} now gives ${actual}`,
    );
    // A package dataset: the registry holds it at another digest.
    const held = `sha256:${'1'.repeat(64)}`;
    fs.writeFileSync(registry, JSON.stringify([{ ...entry, name: 'acme/bench', version: held }]));
    const pkg = buildFile({ inner_dataset: { ref: `acme/bench@${wrong}`, registry_path: registry } });
    expect(loadError(pkg)).toContain(`digest mismatch: acme/bench@${wrong} pins ${wrong}, but ${registry} holds acme/bench at ${held}`);
  });

  test('vero build --registry-path: --print-config shows the pinned source; the build bakes the dataset, the sidecar checks it', async () => {
    const { file: registry, dir } = localRegistry();
    const file = buildFile({ inner_dataset: { ref: 'bench@1.0' } });
    const [entry] = readRegistryFile(registry);
    const digest = legacyDatasetDigest(entry!, dir);
    const printed = await runVero(['build', '-c', file, '--print-config', '--registry-path', registry]);
    expect(printed.code).toBe(0);
    expect((parseYaml(printed.stdout) as { inner_dataset: unknown }).inner_dataset).toEqual({
      ref: 'bench@1.0',
      registry_path: registry,
      digest,
    });

    const out = path.join(tempDir(), 'task');
    await buildTaskDir(file, out, { skipSecretCheck: true, linkRuntime: true, registry: { path: registry } });
    const serve = ServeConfig.parse(JSON.parse(fs.readFileSync(path.join(out, 'environment/sidecar/serve.json'), 'utf8')));
    expect(serve.mode_b!.task_source).toEqual({ dataset: 'bench@1.0', registry_path: '/opt/inner-task/registry.json', digest });
    const baked = path.join(out, 'environment/sidecar/inner-task');
    expect(readRegistryFile(path.join(baked, 'registry.json'))[0]!.tasks.map((t) => t.path)).toEqual(
      TASKS.map((t) => `/opt/inner-task/tasks/${t}`),
    );
    for (const t of TASKS)
      expect(fs.readFileSync(path.join(baked, 'tasks', t, 'instruction.md'), 'utf8')).toBe(
        fs.readFileSync(path.join(DATASET, t, 'instruction.md'), 'utf8'),
      );

    // The sidecar, at start: the baked copy (here at a host path) hashes to the pin; a changed task does not start.
    const hostRegistry = path.join(tempDir(), 'registry.json');
    const reg = readRegistryFile(path.join(baked, 'registry.json'));
    fs.writeFileSync(
      hostRegistry,
      JSON.stringify(reg.map((e) => ({ ...e, tasks: e.tasks.map((t) => ({ ...t, path: path.join(baked, 'tasks', t.name) })) }))),
    );
    const atHost = { ...serve, mode_b: { ...serve.mode_b!, task_source: { ...serve.mode_b!.task_source, registry_path: hostRegistry } } };
    expect(() => verifyPinnedSource(atHost, 'serve.json')).not.toThrow();
    fs.appendFileSync(path.join(baked, 'tasks/sum-numbers/tests/test.sh'), '\n# changed\n');
    expect(() => verifyPinnedSource(atHost, 'serve.json')).toThrow(
      new RegExp(`serve.json: mode_b.task_source: digest mismatch: bench@1.0 was pinned at ${digest}, but .* now gives sha256:`),
    );
  });
});
