// Workflow code only: deterministic, no I/O. Activities are reached through proxyActivities.
export { evaluateCandidate } from './evaluate-candidate';
export { evaluateChunk } from './evaluate-chunk';
export { evaluateSamples } from './evaluate-samples';
export { spendPool, type SpendPoolInput } from './spend-pool';
export { progressQuery } from './queries';
export { setConcurrencyUpdate, type ConcurrencyChange } from './lane-signals';
export { spendPoolQuery, type SpendPoolState } from './spend-signals';
export { buildTask } from './build-task';
export { raceCandidates } from './race-candidates';
export { raceEntry } from './race-entry';
export { raceQuery } from './race-queries';
