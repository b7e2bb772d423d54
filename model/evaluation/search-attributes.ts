/** Custom search attributes: registered on the dev server, set by the workflow, queried by `vero list`. */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const VeroCandidate = defineSearchAttributeKey('VeroCandidate', SearchAttributeType.KEYWORD);
export const VeroStatus = defineSearchAttributeKey('VeroStatus', SearchAttributeType.KEYWORD);
export const VeroScore = defineSearchAttributeKey('VeroScore', SearchAttributeType.DOUBLE);
export const VeroTaskSource = defineSearchAttributeKey('VeroTaskSource', SearchAttributeType.KEYWORD);
export const VeroConfigDigest = defineSearchAttributeKey('VeroConfigDigest', SearchAttributeType.KEYWORD);
/** What the evaluation's trials cost (Harbor's `cost_usd`, summed), set when any trial reported it. */
export const VeroCostUsd = defineSearchAttributeKey('VeroCostUsd', SearchAttributeType.DOUBLE);
/** The candidate as the user named it (`--candidate main`), beside VeroCandidate's SHA: set when the evaluation starts. */
export const VeroCandidateRef = defineSearchAttributeKey('VeroCandidateRef', SearchAttributeType.KEYWORD);

/** The values of VeroStatus: queued (started), running (paused while `vero pause` holds it), then the evaluation's status, or error / cancelled. */
export type VeroStatusValue = 'queued' | 'running' | 'paused' | 'completed' | 'failed' | 'budget_exhausted' | 'error' | 'cancelled';
/** A VeroStatus update (typed: a misspelt status does not compile). */
export const veroStatus = (value: VeroStatusValue) => ({ key: VeroStatus, value }) as const;

const SEARCH_ATTRIBUTES = [VeroCandidate, VeroStatus, VeroScore, VeroTaskSource, VeroConfigDigest, VeroCostUsd, VeroCandidateRef];

const TYPE_NAME: Record<string, string> = {
  KEYWORD: 'Keyword',
  DOUBLE: 'Double',
  INT: 'Int',
  TEXT: 'Text',
  BOOL: 'Bool',
  DATETIME: 'Datetime',
};

/** `Name=Type` for each search attribute, as `temporal` CLI commands take them. */
export const searchAttributeSpecs = (): string[] => SEARCH_ATTRIBUTES.map((k) => `${k.name}=${TYPE_NAME[k.type] ?? k.type}`);

/** `temporal server start-dev --search-attribute` values. */
export function searchAttributeArgs(): string[] {
  return searchAttributeSpecs().flatMap((spec) => ['--search-attribute', spec]);
}
