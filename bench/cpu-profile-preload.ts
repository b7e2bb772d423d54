/**
 * Preloaded (`NODE_OPTIONS=--require …`) into a process a bench wants a CPU profile of (`vero dev`): samples its
 * main thread every millisecond and writes `<VERO_CPU_PROFILE_DIR>/cpu-<pid>.cpuprofile` as it exits (readable by
 * Chrome's DevTools and by bench/cpu-profile-summary.ts). Its own variables are taken out of the environment at
 * once, so the processes it starts (harbor) are not profiled.
 */
import * as fs from 'node:fs';
import * as inspector from 'node:inspector';
import * as path from 'node:path';

const dir = process.env.VERO_CPU_PROFILE_DIR;
delete process.env.VERO_CPU_PROFILE_DIR;
delete process.env.NODE_OPTIONS;
if (dir) {
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1_000 });
  session.post('Profiler.start');
  // The main thread's session answers synchronously, so this works inside an exit handler.
  process.on('exit', () =>
    session.post('Profiler.stop', (err, res) => {
      if (!err) fs.writeFileSync(path.join(dir, `cpu-${process.pid}.cpuprofile`), JSON.stringify(res.profile));
    }),
  );
}
