/** Which Temporal address a command uses, and that it says where it came from (flag, environment, config file). */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { connectionSettings } from '../../cli/options';
import { DATASET, tempDir } from '../helpers/fixtures';

const config = (addressLine: string) => {
  const f = path.join(tempDir(), 'vero.yaml');
  fs.writeFileSync(f, `agent_repo: ./repo\ntasks:\n  source:\n    path: ${DATASET}\n${addressLine}`);
  return f;
};

test('flag > VERO_TEMPORAL_ADDRESS > vero.yaml > default, and each says which', () => {
  const f = config('temporal:\n  address: 10.0.0.1:7233\n');
  const saved = process.env.VERO_TEMPORAL_ADDRESS;
  try {
    delete process.env.VERO_TEMPORAL_ADDRESS;
    expect(connectionSettings({ config: f })).toMatchObject({ address: '10.0.0.1:7233', addressFrom: `from ${f}` });
    // Commander fills --address from the environment variable: the origin says it was the environment.
    process.env.VERO_TEMPORAL_ADDRESS = '127.0.0.1:9999';
    expect(connectionSettings({ config: f, address: '127.0.0.1:9999' })).toMatchObject({
      address: '127.0.0.1:9999',
      addressFrom: `from VERO_TEMPORAL_ADDRESS, over ${f}'s 10.0.0.1:7233`,
    });
    delete process.env.VERO_TEMPORAL_ADDRESS;
    expect(connectionSettings({ config: f, address: '127.0.0.1:8888' }).addressFrom).toBe(`from --address, over ${f}'s 10.0.0.1:7233`);
  } finally {
    if (saved === undefined) delete process.env.VERO_TEMPORAL_ADDRESS;
    else process.env.VERO_TEMPORAL_ADDRESS = saved;
  }
});
