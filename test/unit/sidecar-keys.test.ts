/**
 * The sidecar's own keys — the gateway's upstream keys and, for an online W&B run, W&B's key — never reach candidate
 * code: a harness's passthrough refuses them, a transcript never carries their values, and a reward produced without
 * isolation names them as exposed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { transcriptSecrets } from '../../sidecar/case-feedback';
import { isolationRecord } from '../../sidecar/finalize';
import { sidecarKeyEnvs } from '../../model/compiled-task/sidecar-keys';
import type { ServeConfig } from '../../model/compiled-task/serve-config';
import { WandbSpec } from '../../model/compiled-task/wandb-spec';
import { tempDir } from '../helpers/fixtures';

const online = WandbSpec.parse({ project: 'p' });
const offline = WandbSpec.parse({ project: 'p', mode: 'offline' });

test('an online W&B run adds its key to the sidecar’s own keys; an offline one holds none', () => {
  expect(sidecarKeyEnvs({ wandb: online })).toEqual(['WANDB_API_KEY']);
  expect(sidecarKeyEnvs({ wandb: offline })).toEqual([]);
  expect(sidecarKeyEnvs({})).toEqual([]);
});

test('a transcript never carries W&B’s key; an unisolated reward names it as exposed', () => {
  const tokenPath = path.join(tempDir('keys-'), 'token');
  fs.writeFileSync(tokenPath, 'admin-token-value');
  const cfg = { secrets: [], wandb: online, paths: { token_path: tokenPath }, harness_user: null } as unknown as ServeConfig;
  const secrets = transcriptSecrets(cfg, { WANDB_API_KEY: 'wandb-key-value-1234' });
  expect(secrets).toContain('wandb-key-value-1234');
  expect(isolationRecord(cfg)?.exposure).toContain('WANDB_API_KEY');
  // Declared as a secret too (as vero's own files do): named once.
  const both = { ...cfg, secrets: ['WANDB_API_KEY'] } as unknown as ServeConfig;
  expect(isolationRecord(both)?.exposure.match(/WANDB_API_KEY/g)).toHaveLength(1);
});
