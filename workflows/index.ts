// Workflow code only: deterministic, no I/O. Activities are reached through proxyActivities.
export { evaluateCandidate } from './evaluate-candidate';
export { evaluateChunk } from './evaluate-chunk';
export { evaluateSamples } from './evaluate-samples';
export { spendPool, type SpendPoolInput } from './spend-pool';
export { progressQuery, setConcurrencyUpdate, spendPoolQuery, type ConcurrencyChange, type SpendPoolState } from './queries';
export { buildTask } from './build-task';
export { raceCandidates } from './race-candidates';
export { raceEntry } from './race-entry';
export { raceQuery } from './race-queries';
