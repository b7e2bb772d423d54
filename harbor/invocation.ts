/**
 * How one task of an evaluation is started: `harbor run`'s argv (model/harbor/argv.ts), the working dir and the
 * environment, the same for a task's run and for the preflight's dry run of it.
 */
import * as path from 'node:path';
import { resolvedRegistryFile } from './task-source';
import type { EvalSettings } from '../model/evaluation/input';
import { runPaths } from '../model/paths';
import { harborArgv, preflightArgv } from '../model/harbor/argv';
import { harborJobConfigFile } from './job-config';
import { jobNameFor } from '../model/harbor/job-name';
import type { LaunchPurpose } from './launch-decision';
import { harborCwd, harborEnv } from './process-env';

export interface HarborInvocation {
  argv: string[];
  /** The empty dir harbor runs in (made when missing). */
  cwd: string;
  /** What vero adds to harbor's environment (before isolation: harbor/isolation.ts). */
  env: Record<string, string>;
  jobName: string;
  jobDir: string;
}

export function taskInvocation(
  s: EvalSettings,
  runDir: string,
  worktree: string,
  task: string,
  purpose: LaunchPurpose = 'task',
): HarborInvocation {
  const jobsDir = runPaths(runDir).jobsDir;
  const jobName = jobNameFor(task);
  const jobDir = path.join(jobsDir, jobName);
  const source = s.source.registry_path ? { ...s.source, registry_path: resolvedRegistryFile(s.source.registry_path, runDir) } : s.source;
  const jobConfigFile = harborJobConfigFile(s.harbor, runDir);
  const argv = (purpose === 'dry-run' ? preflightArgv : harborArgv)({
    harbor: s.harbor,
    source,
    task,
    jobsDir,
    jobName,
    worktree,
    ...(jobConfigFile ? { jobConfigFile } : {}),
  });
  return { argv, cwd: harborCwd(runDir), env: harborEnv(s, worktree, jobDir), jobName, jobDir };
}
