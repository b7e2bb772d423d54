/**
 * What a ranking ranked by and what a candidate broke, as `vero best`, `vero compare` and `vero finalize` say it:
 * the objective's metric and direction, and each constraint a candidate broke (`metric operator value (observed x)`).
 */

/** A ranking's metric, direction and constraints (model/evaluation/candidate-result.ts EVALUATION_RANKING; finalize's objective). */
export interface RankedBy {
  metric: string;
  direction: string;
  constraints: string[];
  meaning?: string;
  ties?: string;
}

/** The constraint list as one phrase. */
const constraintsText = (c: string[]) => (c.length ? `constraints: ${c.join('; ')}` : 'no constraints');

/** `ranked by score (maximize: …); ties: …; no constraints` */
export function rankedByLine(r: RankedBy): string {
  const first = r.direction === 'minimize' ? 'lowest first' : 'highest first';
  return `ranked by ${r.metric} (${r.direction}, ${first}${r.meaning ? `: ${r.meaning}` : ''})${r.ties ? `; ties: ${r.ties}` : ''}; ${constraintsText(r.constraints)}`;
}

/** What finalize's record says about its ranking (sidecar/finalize.ts FinalizeResult's fields). */
export interface FinalizeRanking {
  objective?: RankedBy;
  shortlist?: { commit: string; violations?: string[] }[];
  violations?: Record<string, string[]>;
  candidates?: { commit: string; split: string; admin: boolean; violations?: string[] }[];
}

/**
 * finalize's ranking, line by line: the metric and direction it ranked by with the constraints; each candidate an
 * evaluation of which broke one (never chosen): the optimizer's on a split, or a trusted re-score of the
 * shortlist; and each target where the graded candidate broke one (its reward is the failure value).
 */
export function finalizeRankingLines(r: FinalizeRanking): string[] {
  if (!r.objective) return [];
  const broke = new Map<string, string>();
  for (const c of r.candidates ?? [])
    if (!c.admin && c.violations?.length) broke.set(`${c.commit} ${c.split}`, `on ${c.split}: ${c.violations.join('; ')}`);
  for (const e of r.shortlist ?? [])
    if (e.violations?.length) broke.set(`${e.commit} rescore`, `re-scored on the selection split: ${e.violations.join('; ')}`);
  return [
    rankedByLine(r.objective),
    ...[...broke].map(([key, what]) => `${key.slice(0, 12)} not eligible: broke ${what}`),
    ...Object.entries(r.violations ?? {}).map(
      ([target, v]) => `target ${target}: the graded candidate broke ${v.join('; ')} (its reward is the failure value)`,
    ),
  ];
}
