/**
 * What makes an evaluation safe to reset (`temporal workflow reset`; docs/deploy.md says which reset points are
 * safe): the patch under which a reset run's chunks take fresh ids where the run reset away left its chunks
 * running (workflows/lane-grants.ts), and chunks name themselves and their tasks in what they report, so the
 * parent takes lanes back only from its own chunks and a task's spend is counted once (workflows/chunk-lanes.ts,
 * spend-meter.ts, spend-pool.ts).
 */
export const RESET_SAFE_CHUNKS = 'reset-safe-chunks';
