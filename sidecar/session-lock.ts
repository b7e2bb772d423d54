/**
 * One sidecar per session dir: `vero serve` takes `sidecar.lock` on the admin volume (created with O_EXCL, holding
 * its pid and host) before it reads any state, and refuses to start while another live sidecar holds it. A lock
 * left by a dead sidecar (a killed container, a crash) is taken over. Released on close.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { processAlive } from '../infra/process-alive';
import { ConfigError } from '../model/errors';
import { readJson } from '../infra/json-file';

interface Holder {
  pid: number;
  host: string;
  at: string;
}

export function lockSessionDir(adminVolume: string): { release(): void } {
  const file = path.join(adminVolume, 'sidecar.lock');
  const me: Holder = { pid: process.pid, host: os.hostname(), at: new Date().toISOString() };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = fs.openSync(file, 'wx', 0o600);
      // The lock is the exclusive create itself, so the holder is written into it (not renamed over it).
      // eslint-disable-next-line no-restricted-properties -- written to the fd the exclusive create returned
      fs.writeFileSync(fd, `${JSON.stringify(me)}\n`);
      fs.fsyncSync(fd);
      fs.closeSync(fd);
      return { release: () => fs.rmSync(file, { force: true }) };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const holder = readJson<Holder>(file); // null when unreadable: left half-written by a crash
    // The same host and a live pid other than ours: a second sidecar on this session dir.
    if (holder && holder.host === me.host && holder.pid !== me.pid && processAlive(holder.pid))
      throw new ConfigError(
        `${adminVolume}: another eval sidecar (pid ${holder.pid}, since ${holder.at}) serves this session dir; refusing to start a second one on it`,
      );
    fs.rmSync(file, { force: true }); // stale: its sidecar is gone
  }
  throw new ConfigError(`${adminVolume}: cannot take the session lock ${file}`);
}
