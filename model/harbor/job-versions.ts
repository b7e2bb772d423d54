/**
 * A job dir whose trials two Harbor versions wrote: begun by Harbor 0.25 (its results carry no `schema_version`)
 * and resumed by 0.26 (which writes one in every result), after Harbor was upgraded under a running evaluation.
 * Harbor 0.26 resumes such a job when its config still matches, keeping the earlier trials; so does vero, and
 * says so: the earlier trials' reward validity is derived from their exception type by 0.26's error policy
 * (model/harbor/error-policy.ts), the rule 0.26 applies to its own.
 */
import type { LoadedTrial } from './trial-ranking';

/** The row's note for a job resumed across Harbor versions, or null when one version wrote all its trials. */
export function resumedAcrossVersionsNote(trials: LoadedTrial[], lockVersion: string | null): string | null {
  const older = trials.filter((t) => t.result.schema_version === undefined).length;
  const newer = trials.length - older;
  if (older === 0 || newer === 0) return null;
  const begun = lockVersion && !lockVersion.startsWith('0.26') ? `Harbor ${lockVersion}` : 'a Harbor before 0.26';
  return (
    `the job was begun by ${begun} and resumed by Harbor 0.26 or later (Harbor upgraded meanwhile): its ${older} earlier ` +
    `trial(s) are kept, their reward validity derived from the exception type by 0.26's error policy; ${newer} trial(s) ` +
    `ran on the newer Harbor`
  );
}
