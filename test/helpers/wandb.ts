/** W&B's client as the tests read runs back with it (scripts/ensure-wandb), and an offline run read by its own reader. */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { WANDB_VERSION } from '../../model/compiled-task/wandb-spec';
import { ROOT } from './fixtures';

/** W&B's client as scripts/ensure-wandb made it (run by .ci/run): the test fails, naming it, when it is missing. */
export function wandbPython(): string {
  const cache = process.env.VERO_CACHE ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'vero-harbor');
  const python = path.join(cache, `wandb-${WANDB_VERSION}`, 'bin', 'python');
  if (!fs.existsSync(path.join(cache, `wandb-${WANDB_VERSION}`, '.complete')))
    throw new Error(`W&B's client wandb==${WANDB_VERSION} is not installed at ${python}: run scripts/ensure-wandb (.ci/run does)`);
  return python;
}

export interface RunRecord {
  run: { id: string; project: string; group: string; name: string; tags: string[]; notes: string; config: Record<string, unknown> };
  history: Record<string, unknown>[];
  summary: Record<string, unknown>;
  artifacts: { name: string; type: string; files: string[] }[];
  exit_code: number | null;
}

/** The offline run (the one `offline-run-*` dir under `<wandbDir>/wandb`): its `.wandb` file as W&B's reader reads it. */
export function readRun(python: string, wandbDir: string): RunRecord {
  const runs = fs.readdirSync(path.join(wandbDir, 'wandb')).filter((d) => d.startsWith('offline-run-'));
  expect(runs).toHaveLength(1);
  const dir = path.join(wandbDir, 'wandb', runs[0]!);
  const file = fs.readdirSync(dir).find((f) => f.endsWith('.wandb'))!;
  const out = execFileSync(python, [path.join(ROOT, 'test/helpers/wandb_run_reader.py'), path.join(dir, file)], { encoding: 'utf8' });
  return JSON.parse(out) as RunRecord;
}
