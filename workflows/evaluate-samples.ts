/**
 * A Mode A evaluation of the eval sidecar (inference + trusted scorer), as a workflow so a sidecar restart
 * resumes it instead of losing it; its id is derived from what it evaluates, so a re-sent request attaches.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ModeAInput } from '../activities/mode-a';

const { runModeA } = proxyActivities<Activities>({
  startToCloseTimeout: '24h',
  heartbeatTimeout: '10s', // the activity beats every 2 s: a dead sidecar's evaluation moves on quickly
  retry: { maximumAttempts: 3, initialInterval: '2s' },
});

export async function evaluateSamples(input: ModeAInput): Promise<{ resultFile: string }> {
  return runModeA.executeWithOptions({ summary: `mode A ${input.split} (${input.ids.length} sample(s))` }, [input]);
}
