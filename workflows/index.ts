// Workflow code only: deterministic, no I/O. Activities are reached through proxyActivities.
export { evaluateCandidate } from './evaluate-candidate';
export { evaluateChunk } from './evaluate-chunk';
export { evaluateSamples } from './evaluate-samples';
export { progressQuery, setConcurrencyUpdate, type ConcurrencyChange } from './queries';
export { buildTask } from './build-task';
