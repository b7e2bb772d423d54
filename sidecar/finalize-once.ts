/**
 * `POST /finalize` runs once: a second call (a retried verifier) gets the recorded result, and a call while one
 * is running waits for it. It first closes the sidecar to new evaluations and drains those in flight. A failed
 * finalize records nothing, so it can be run again.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeJsonDurable } from '../infra/atomic-file';
import type { AgentEvaluations } from './agent-evaluations';
import { finalize, type FinalizeResult } from './finalize';
import type { SidecarDeps } from './sidecar-deps';

export class FinalizeOnce {
  private running: Promise<FinalizeResult> | null = null;
  private readonly file: string;

  constructor(
    private readonly d: SidecarDeps,
    private readonly evals: AgentEvaluations,
  ) {
    this.file = path.join(d.cfg.paths.admin_volume, 'finalize.json');
  }

  async run(): Promise<FinalizeResult> {
    this.evals.close();
    this.running ??= this.finalizeOnce().finally(() => (this.running = null));
    try {
      return await this.running;
    } catch (e) {
      this.d.log(`finalize failed: ${(e as Error).message}`);
      throw e;
    }
  }

  private async finalizeOnce(): Promise<FinalizeResult> {
    const { cfg, engine, registry, log } = this.d;
    if (fs.existsSync(this.file)) return { ...(JSON.parse(fs.readFileSync(this.file, 'utf8')) as FinalizeResult), replayed: true };
    const drain = await this.evals.drain();
    const result = { ...(await finalize(cfg, engine, registry)), ...(drain ? { drain } : {}), candidates: registry.list() };
    log(`finalize: commit ${result.commit ?? '(none)'}: ${result.reason}`);
    fs.mkdirSync(cfg.paths.admin_volume, { recursive: true });
    writeJsonDurable(this.file, result, { mode: 0o600 });
    this.d.onFinalized?.(result);
    return result;
  }
}
