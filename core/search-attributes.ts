/** Custom search attributes: registered on the dev server, set by the workflow, queried by `vero list`. */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const VeroCandidate = defineSearchAttributeKey('VeroCandidate', SearchAttributeType.KEYWORD);
export const VeroStatus = defineSearchAttributeKey('VeroStatus', SearchAttributeType.KEYWORD);
export const VeroScore = defineSearchAttributeKey('VeroScore', SearchAttributeType.DOUBLE);
export const VeroTaskSource = defineSearchAttributeKey('VeroTaskSource', SearchAttributeType.KEYWORD);
export const VeroConfigDigest = defineSearchAttributeKey('VeroConfigDigest', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTES = [VeroCandidate, VeroStatus, VeroScore, VeroTaskSource, VeroConfigDigest];

/** `temporal server start-dev --search-attribute` values. */
export function searchAttributeArgs(): string[] {
  const typeName: Record<string, string> = {
    KEYWORD: 'Keyword',
    DOUBLE: 'Double',
    INT: 'Int',
    TEXT: 'Text',
    BOOL: 'Bool',
    DATETIME: 'Datetime',
  };
  return SEARCH_ATTRIBUTES.flatMap((k) => ['--search-attribute', `${k.name}=${typeName[k.type] ?? k.type}`]);
}
