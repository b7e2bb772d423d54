/**
 * `vero build --print-config`: what a build file became in our schema (a vero file mapped, `${NAME}`s
 * substituted, defaults filled in), with what was carried over with a difference as comments.
 */
import { stringify as toYaml } from 'yaml';
import { BuildParams } from './build-params';
import type { RegistryLocation } from '../harbor/dataset-ref';
import { BuildConfigFile, loadBuildConfig, readBuildDocument, trustNotes } from './build-config';

export interface PrintedConfig {
  /** Our build.yaml, as YAML. */
  text: string;
  /** Why the build would refuse it (empty: it builds). */
  problems: string[];
}

export function printConfig(file: string, params: BuildParams = {}, registry: RegistryLocation = {}): PrintedConfig {
  const { raw, format, notes } = readBuildDocument(file, params, process.env, registry);
  const parsed = BuildConfigFile.safeParse(raw);
  const header = [
    `# ${file}${format === 'vero' ? " (vero's format)" : ''}, in vero-harbor's build.yaml schema`,
    ...[...notes, ...(parsed.success ? trustNotes(parsed.data) : [])].map((n) => `# note: ${n}`),
  ];
  let problems: string[] = [];
  let pinned: unknown;
  try {
    pinned = loadBuildConfig(file, params, registry).inner_dataset; // the registry source as the build pins it
  } catch (e) {
    problems = (e as Error).message.split('\n');
  }
  const shown = parsed.success ? { ...parsed.data, ...(pinned ? { inner_dataset: pinned } : {}) } : raw;
  const body = toYaml(shown, { lineWidth: 0 });
  return { text: `${header.join('\n')}\n${body}`, problems };
}
