/** Command lines in config files: a list is taken as is; a string is split on whitespace (use a list to quote). */
export function commandArgv(command: string | readonly string[]): string[] {
  return Array.isArray(command) ? [...(command as readonly string[])] : (command as string).trim().split(/\s+/).filter(Boolean);
}
