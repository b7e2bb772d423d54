/**
 * The vero home (results, worktrees, job dirs) must be a writable directory on a real file system. Checked
 * before anything starts, so a bad `home` is exit 2 with the reason instead of a worker stuck creating it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isInside } from './bounded-read';
import { ConfigError } from '../model/errors';

const PSEUDO_FILE_SYSTEMS = ['/proc', '/sys', '/dev'];

export function checkHome(home: string, field = 'home'): void {
  const abs = path.resolve(home);
  let existing = abs;
  while (!fs.existsSync(existing) && path.dirname(existing) !== existing) existing = path.dirname(existing);
  const real = fs.realpathSync(existing);
  const pseudo = PSEUDO_FILE_SYSTEMS.find((p) => isInside(real, p));
  if (pseudo) throw new ConfigError(`${field}: ${home} is under ${pseudo}, not a real file system; choose another directory`);
  if (fs.existsSync(abs) && !fs.statSync(abs).isDirectory()) throw new ConfigError(`${field}: ${home} exists and is not a directory`);
  try {
    fs.mkdirSync(abs, { recursive: true });
    fs.accessSync(abs, fs.constants.W_OK | fs.constants.X_OK);
  } catch (e) {
    throw new ConfigError(`${field}: ${home} cannot be used (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}
