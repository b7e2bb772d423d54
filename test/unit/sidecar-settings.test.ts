/** The sidecar's Mode B evaluations get their settings through the CLI's schema and builder. */
import { settingsFrom } from '../../client/eval-input';
import { evalConfigOf } from '../../infra/eval-config-file';
import { ServeConfig } from '../../model/compiled-task/serve-config';
import { modeBSettings } from '../../sidecar/engine';

const cfg = ServeConfig.parse({
  schema_version: 1,
  task_name: 't',
  mode: 'B',
  repo_path: '/repo',
  agent_repo_path: '/agent',
  base_commit: 'a'.repeat(40),
  splits: [{ split: 'train', access: 'viewable' }],
  budgets: [{ split: 'train', total_run_budget: 3 }],
  reward_mode: 'auto_best',
  selection_split: 'train',
  auto_best_k: 1,
  baseline_floor: false,
  targets: [{ split: 'train' }],
  submit_enabled: false,
  secrets: ['API_KEY'],
  harness_user: 'harness',
  timeout_sec: 900,
  max_concurrency: 6,
  paths: { home: '/home/v', agent_volume: '/a', admin_volume: '/b', token_path: '/t' },
  mode_b: { harbor: { agent: 'agent:SkillAgent', n_attempts: 2 }, task_source: { path: '/tasks' }, partition: { train: ['x'] } },
  host: '0.0.0.0',
  port: 0,
});

test("Mode B settings are the CLI builder's: every execution default (stop_grace, chunk_size) and no preflight", () => {
  const s = modeBSettings(cfg, '/run/env.json', 'agent');
  expect(s).toMatchObject({
    concurrency: 6,
    taskTimeoutSec: 900,
    taskAttempts: 1,
    heartbeatTimeoutSec: 60,
    chunkSize: 500,
    stopGraceSec: 60,
    preflight: false,
    errorRateThreshold: 1,
    source: { path: '/tasks' },
    isolation: { runAs: 'harness', passEnv: ['API_KEY'], envFile: '/run/env.json' },
  });
  expect(s.harbor).toMatchObject({ agent: 'agent:SkillAgent', n_attempts: 2 });
  // The same settings as a vero.yaml with those values would give, apart from the isolation.
  const { isolation: _isolation, ...rest } = s;
  expect(rest).toEqual(
    settingsFrom(
      evalConfigOf({
        agent_repo: '/repo',
        tasks: { source: { path: '/tasks' } },
        harbor: s.harbor,
        scoring: { aggregate: 'best', error_rate_threshold: 1 },
        execution: { concurrency: 6, task_timeout: 900, task_attempts: 1, heartbeat_timeout: 60, preflight: false },
        home: '/home/v',
      }),
    ),
  );
  // The verifier's: its own task attempts and a target's attempts, scored by their mean.
  expect(modeBSettings(cfg, undefined, 'trusted', { nAttempts: 4 })).toMatchObject({
    taskAttempts: 3,
    aggregate: 'mean',
    harbor: { n_attempts: 4 },
  });
});
