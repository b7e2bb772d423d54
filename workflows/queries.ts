/** The progress query of an evaluation (parent) or a chunk (child): what `vero status` and the views read. */
import { defineQuery } from '@temporalio/workflow';
import type { Progress } from '../model/evaluation/progress';

/** Progress of an evaluation (parent) or of one chunk (child). */
export const progressQuery = defineQuery<Progress>('progress');
