/**
 * Where the browser tests save their screenshots, for a person to look at: `test-output/screenshots/` in the
 * checkout (ignored by git), or $VERO_KEEP_SCREENSHOTS when set.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from './fixtures';

export function screenshotPath(name: string): string {
  const dir = process.env.VERO_KEEP_SCREENSHOTS || path.join(ROOT, 'test-output', 'screenshots');
  fs.mkdirSync(dir, { recursive: true });
  return path.join(dir, name);
}
