/** What a process killed mid-clone leaves behind is removed by the next caller on its host; nothing else is. */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { removeDeadTemps } from '../../infra/git';
import { hostId } from '../../infra/host-groups';
import { tempDir } from '../helpers/fixtures';

test('a dead process’s temp clone is removed; a live one’s, another host’s and other files are kept', async () => {
  const dir = tempDir();
  const target = path.join(dir, 'abc.git');
  const deadPid = spawnSync('true').pid!;
  const live = spawn('sleep', ['30']);
  try {
    const names = {
      dead: `abc.git.tmp-${hostId()}-${deadPid}-1`,
      live: `abc.git.tmp-${hostId()}-${live.pid}-2`,
      otherHost: `abc.git.tmp-some-other-host-${deadPid}-3`,
      other: 'abc.git.keep',
    };
    for (const n of Object.values(names)) fs.mkdirSync(path.join(dir, n, 'objects'), { recursive: true });
    expect(removeDeadTemps(target)).toEqual([names.dead]);
    expect(fs.readdirSync(dir).sort()).toEqual([names.live, names.otherHost, names.other].sort());
  } finally {
    live.kill('SIGKILL');
  }
});
