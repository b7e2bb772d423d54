import { defineQuery } from '@temporalio/workflow';
import type { RaceState } from '../model/race/types';

/** A race's state: the shared order, each candidate's running mean and confidence sequences, the decisions so far. */
export const raceQuery = defineQuery<RaceState>('race');
