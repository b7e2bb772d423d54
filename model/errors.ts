/** Error types shared by the CLI, activities and compiler. Each failure class has one type. */
import type { z } from 'zod';

/** Bad user input (config file, flags, candidate ref). Never retried; the CLI exits 2. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Formats zod issues as `file: path.to.field: problem` lines. */
export function formatZodIssues(issues: z.core.$ZodIssue[], where: string): string {
  return issues
    .map((i) => {
      const at = i.path.length ? i.path.join('.') : '(top level)';
      if (i.code === 'unrecognized_keys') {
        const keys = (i as { keys: string[] }).keys;
        return `${where}: ${keys.map((k) => (i.path.length ? `${at}.${k}` : k)).join(', ')}: unknown key${keys.length > 1 ? 's' : ''}`;
      }
      return `${where}: ${at}: ${i.message}`;
    })
    .join('\n');
}
