import { defineQuery } from '@temporalio/workflow';
import type { Progress } from '../core/eval-types';

/** Progress of an evaluation (parent) or of one chunk (child). */
export const progressQuery = defineQuery<Progress>('progress');
