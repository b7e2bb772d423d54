/**
 * The host secrets the sidecar holds for its own use: the gateway's upstream keys and, for an online W&B run, W&B's
 * key. Candidate code never gets one: a harness's passthrough refuses them, a transcript never carries their values,
 * and an unisolated reward names them as exposed.
 */
import { type GatewaySpec, upstreamKeyEnvs } from '../gateway/policy';
import { type WandbSpec, wandbKeyEnvs } from './wandb-spec';

/** The sidecar's own key variables of a build (or serve) config. */
export const sidecarKeyEnvs = (c: { gateway?: GatewaySpec; wandb?: WandbSpec }): string[] => [
  ...upstreamKeyEnvs(c.gateway),
  ...wandbKeyEnvs(c.wandb),
];
