/** The Harbor job config file (`-c`) of a run: written once per run dir, the same bytes on every attempt. */
import { retryBackoffConfig } from '../model/harbor/argv';
import type { HarborSection } from '../model/harbor/config';
import { runPaths } from '../model/paths';
import * as fs from 'node:fs';
import { writeFileDurable } from '../infra/atomic-file';

/** Its path when the settings need one (a retry backoff), else undefined. Readable by the harness user. */
export function harborJobConfigFile(harbor: HarborSection, runDir: string): string | undefined {
  const config = retryBackoffConfig(harbor);
  if (!config) return undefined;
  const file = runPaths(runDir).harborJobConfig;
  const text = `${JSON.stringify(config, null, 2)}\n`;
  if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== text) writeFileDurable(file, text, { mode: 0o644 });
  return file;
}
