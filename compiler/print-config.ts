/**
 * `vero build --print-config`: what a build file became in our schema (a vero file mapped, `${NAME}`s
 * substituted, defaults filled in), with what was carried over with a difference as comments.
 */
import { stringify as toYaml } from 'yaml';
import { BuildParams } from './build-params';
import { BuildConfigFile, loadBuildConfig, readBuildDocument, trustNotes } from './build-config';

export interface PrintedConfig {
  /** Our build.yaml, as YAML. */
  text: string;
  /** Why the build would refuse it (empty: it builds). */
  problems: string[];
}

export function printConfig(file: string, params: BuildParams = {}): PrintedConfig {
  const { raw, format, notes } = readBuildDocument(file, params);
  const parsed = BuildConfigFile.safeParse(raw);
  const header = [
    `# ${file}${format === 'vero' ? " (vero's format)" : ''}, in vero-harbor's build.yaml schema`,
    ...[...notes, ...(parsed.success ? trustNotes(parsed.data) : [])].map((n) => `# note: ${n}`),
  ];
  let problems: string[] = [];
  try {
    loadBuildConfig(file, params);
  } catch (e) {
    problems = (e as Error).message.split('\n');
  }
  const body = toYaml(parsed.success ? parsed.data : raw, { lineWidth: 0 });
  return { text: `${header.join('\n')}\n${body}`, problems };
}
