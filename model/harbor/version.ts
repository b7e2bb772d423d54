/**
 * The Harbor releases vero-harbor supports, each pinned and tested: 0.25.0 and 0.26.0 (0.26 writes each trial's
 * `reward_valid` and `exception_info.policy`; model/harbor/error-policy.ts derives them for 0.25 results).
 * `scripts/ensure-harbor` installs DEFAULT_HARBOR_VERSION unless asked for another supported one; the stand-in
 * imitates it (HARBOR_STANDIN_VERSION selects another).
 */
export const SUPPORTED_HARBOR_VERSIONS = ['0.25.0', '0.26.0'] as const;
export type SupportedHarborVersion = (typeof SUPPORTED_HARBOR_VERSIONS)[number];

/** What a new user's `pip install harbor` gives today, and what ensure-harbor installs by default. */
export const DEFAULT_HARBOR_VERSION: SupportedHarborVersion = '0.26.0';

/**
 * The real-Harbor tier's first version (the outer `harbor run` of its tests, `vero demo-optimize`, `vero dev
 * --real`) and the stand-in's default. A compiled task's sidecar runs its build.yaml's `harbor_version` instead
 * (default DEFAULT_HARBOR_VERSION).
 */
export const HARBOR_VERSION: SupportedHarborVersion = '0.25.0';

export function isSupportedHarborVersion(v: string): v is SupportedHarborVersion {
  return (SUPPORTED_HARBOR_VERSIONS as readonly string[]).includes(v);
}

/**
 * What vero says of a Harbor version it detected: null when supported; otherwise the documented answer
 * (docs/errors.md): the run goes on with this warning, its rows' validity read from the result files where they
 * carry it and derived by 0.26's table where not.
 */
export function unsupportedHarborWarning(v: string | null): string | null {
  if (v === null || isSupportedHarborVersion(v)) return null;
  return `Harbor ${v} is not a version vero-harbor supports (${SUPPORTED_HARBOR_VERSIONS.join(', ')}): it runs, with rewards judged by Harbor 0.26's error policy; install a supported one with scripts/ensure-harbor`;
}

/**
 * Whether two evaluations ran on different Harbor versions (each result's `harborVersions`, from its jobs'
 * lock.json): what a comparison of them must say, or null when the versions are the same (or unknown).
 */
export function harborVersionsDiffer(a: readonly string[] | undefined, b: readonly string[] | undefined): string | null {
  if (!a?.length || !b?.length) return null;
  const key = (v: readonly string[]) => [...v].sort().join(', ');
  if (key(a) === key(b)) return null;
  return `A and B ran on different Harbor versions (A ${key(a)}, B ${key(b)}): Harbor 0.26 no longer counts a reward its error policy marks not valid, so scores may differ for that reason alone`;
}
