/**
 * Weights & Biases reporting of the trusted side (vero's `wandb` section): one run per task, logged by the
 * eval sidecar with W&B's official Python client (sidecar/wandb_logger.py), never by the optimizer's container.
 */
import { z } from 'zod';

/**
 * The `wandb` package the sidecar image installs (from the build's wheelhouse) and the tests read runs back with
 * (scripts/ensure-wandb): the newest release that still ships its Python reader of a run's `.wandb` file.
 */
export const WANDB_VERSION = '0.29.0';

/** The pip requirement for it. */
export const WANDB_REQUIREMENT = `wandb==${WANDB_VERSION}`;

/** The key an online run needs in the sidecar's environment (from the build host's, as every secret). */
const WANDB_KEY_ENV = 'WANDB_API_KEY';

/**
 * The run: vero's fields. `mode` is settled at build time: the file's, else WANDB_MODE in the build's environment,
 * else online; `disabled` leaves the section out.
 */
export const WandbSpec = z.strictObject({
  project: z.string().min(1),
  entity: z.string().min(1).optional(),
  name: z.string().min(1).optional(),
  group: z.string().min(1).optional(),
  tags: z.array(z.string()).default([]),
  notes: z.string().optional(),
  /** Resume this run instead of the task's own (default: one id per task session, kept across sidecar restarts). */
  run_id: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, 'expected a run id of letters, digits, _ -')
    .optional(),
  /** online: sent as it is logged (needs WANDB_API_KEY); offline: a run dir on the admin volume for `wandb sync`. */
  mode: z.enum(['online', 'offline']).default('online'),
  /** Also each evaluation's trace and, at finalize, the gateway's request log, as artifacts. */
  log_traces: z.boolean().default(false),
});
export type WandbSpec = z.infer<typeof WandbSpec>;

/** The environment variables the sidecar needs for the run: the key, for an online run. */
export const wandbKeyEnvs = (spec: WandbSpec | undefined): string[] => (spec?.mode === 'online' ? [WANDB_KEY_ENV] : []);

/** The run's dir on the sidecar's admin volume (events, the logger's state, W&B's own files). */
export const WANDB_DIR = 'wandb';

/**
 * How long the task's collect step (`vero snapshot`) waits for an offline run's logger to write the run out: a
 * quarter of the collect step's timeout (compiler/render.ts COLLECT_TIMEOUT_SEC), the rest left to the snapshot.
 */
export const WANDB_END_WAIT_SEC = 30;

/** Where a trial keeps an offline run's dir (a Harbor artifact of the sidecar, beside its `vero-session/`). */
export const WANDB_ARTIFACT = 'vero-wandb';

/** Names the Python with the `wandb` package that the sidecar runs its logger with (default: python3). */
export const WANDB_PYTHON_ENV = 'VERO_WANDB_PYTHON';
