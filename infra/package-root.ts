/** Where this package is (the clone, or the installed package): its examples, scripts and the stand-in. */
import * as path from 'node:path';

export const PROJECT_ROOT = path.resolve(__dirname, '..', __dirname.includes(`${path.sep}dist${path.sep}`) ? '..' : '.');
