/**
 * vero's `evaluation_backend: command` → ours: mode A with a command harness (model/compiled-task/command-harness.ts). The
 * harness (`command_backend.harness_source`) is baked into the sidecar, its command keeps vero's placeholders, and
 * it runs with vero's minimal environment plus `environment` and `passthrough_environment` (and the build's
 * `secrets`, as vero's compiler adds them). The partitions name each split's cases.
 */
import * as path from 'node:path';
import type { VeroBuild } from './vero-schema';

/** What a mode B mapping holds that a command harness has no use for. */
const HARBOR_ONLY = ['harbor', 'harbor_version', 'harbor_packages', 'inner_task', 'inner_dataset', 'scoring', 'feedback'];

/** vero's rule: each backend gets its own fields and only its own. */
export function commandBackendErrors(v: VeroBuild): string[] {
  const b = v.command_backend;
  if (v.evaluation_backend !== 'command') return b ? ['command_backend: requires evaluation_backend: command'] : [];
  if (!b) return ['evaluation_backend: command requires a command_backend'];
  const errs: string[] = [];
  if (Object.keys(b.staged_inputs).length)
    errs.push('command_backend.staged_inputs: staged inputs ({input:…} placeholders) are not supported; put the files in harness_source');
  if (Object.keys(b.agent_context_inputs).length)
    errs.push('command_backend.agent_context_inputs: publishing staged inputs to the optimizer is not supported');
  const overlap = b.passthrough_environment.filter((n) => n in b.environment);
  if (overlap.length) errs.push(`command_backend: environment and passthrough_environment overlap for ${overlap.join(', ')}`);
  for (const k of ['task_source', 'agent_import_path', 'model'] as const)
    if (v[k] !== null) errs.push(`${k}: only applies to a harbor evaluation_backend`);
  return errs;
}

/** The mapped config as mode A with vero's command harness, and what the build says about it. */
export function toCommandMode(v: VeroBuild, baseDir: string, config: Record<string, unknown>, notes: string[]): Record<string, unknown> {
  const b = v.command_backend!;
  const out: Record<string, unknown> = { ...config, mode: 'A', partition: v.partitions };
  for (const k of HARBOR_ONLY) delete out[k];
  // vero exposes a command backend's case resources from agent_context_inputs only, which are not supported: nothing.
  out.splits = (config.splits as Record<string, unknown>[]).map(({ expose_case_resources, ...s }) => {
    if (expose_case_resources)
      notes.push(
        `agent_access.${String(s.split)}.expose_case_resources: a command backend has no case resources to expose (vero's come from agent_context_inputs)`,
      );
    return s;
  });
  out.harness = {
    dir: path.resolve(baseDir, b.harness_source),
    command: b.command,
    working_directory: b.working_directory,
    env: b.environment,
    passthrough_env: [...new Set([...b.passthrough_environment, ...v.secrets])],
  };
  notes.push(
    'command_backend: the harness runs in the sidecar as its harness user, on the candidate’s checkout, with vero’s minimal environment; its request lists the evaluated cases (no VERO_CASES_DIR); a harness that exits non-zero or writes no report is an infrastructure failure, never a score',
  );
  if (v.inference_gateway) notes.push('inference_gateway.evaluation: unused by a command harness (it gets no gateway token, as in vero)');
  return out;
}
