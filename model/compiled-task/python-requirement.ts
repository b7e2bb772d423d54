/** Python requirements (PEP 508) as the compiler reads them. */

/** A requirement's project name, normalised as PyPI compares them (`Foo_Bar[x]>=1` → `foo-bar`). */
export function requirementName(requirement: string): string {
  return (/^[A-Za-z0-9][A-Za-z0-9._-]*/.exec(requirement.trim())?.[0] ?? '').toLowerCase().replace(/[-_.]+/g, '-');
}
