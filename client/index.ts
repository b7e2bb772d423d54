/**
 * vero-harbor as a library (`import { … } from 'vero-harbor'`): the evaluation client the CLI itself uses, a
 * deliberately small surface. docs/client.md documents it; examples/client-library/ runs it.
 *
 * connect → prepareEvalInput (a vero.yaml read by loadEvalConfig, and a candidate) → startOrAttach →
 * getProgress / awaitResult → withTasks; listEvaluations, pickBest, comparePaired, queryEvaluations.
 */
export { connect, uiLink } from './connection';
export { prepareEvalInput } from './eval-input';
export { startOrAttach, type StartOutcome } from './eval-start';
export { getProgress, setConcurrency } from './running-eval';
export { awaitResult, withTasks, pickBest } from './eval-results';
export { listEvaluations, type EvalListing } from './eval-listing';
export { partialResults, type PartialResults } from './partial-results';
export { pauseEvaluation, resumeEvaluation, type PauseOutcome } from './pause';
export { retryTasks, type RetryStarted } from './retry';
export { queryEvaluations, QUERY_LIMITS, type QueryOptions, type QueryResult } from './query';
export type { QuerySources } from './query-tables';
export { QUERY_VIEWS, type ViewDef, type ViewColumn } from '../model/query-views';
export { loadEvalConfig, type EvalConfig } from '../infra/eval-config-file';
export { comparePaired, taskScoresOf, type PairedComparison, type CompareOptions } from '../model/race/paired-comparison';
export type { CandidateResult, EvalStatus } from '../model/evaluation/candidate-result';
export type { TaskResult } from '../model/evaluation/task-result';
export type { Progress } from '../model/evaluation/progress';
export type { EvalInput } from '../model/evaluation/input';
export { VeroError, ConfigError, TemporalUnreachableError, ExitCode } from '../model/errors';
