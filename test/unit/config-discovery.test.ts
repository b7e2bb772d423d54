/** vero.yaml is found as git finds its repo: in the working directory or the nearest parent. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { configPath } from '../../cli/options';
import { tempDir } from '../helpers/fixtures';

test('-c wins; else the nearest vero.yaml upward; none: null', () => {
  const root = tempDir('vero-discovery-');
  const deep = path.join(root, 'a', 'b', 'c');
  fs.mkdirSync(deep, { recursive: true });
  expect(configPath({}, deep)).toBeNull();
  fs.writeFileSync(path.join(root, 'vero.yaml'), 'agent_repo: x\n');
  expect(path.resolve(configPath({}, deep)!)).toBe(path.join(root, 'vero.yaml'));
  fs.writeFileSync(path.join(root, 'a', 'vero.yaml'), 'agent_repo: y\n');
  expect(path.resolve(configPath({}, deep)!)).toBe(path.join(root, 'a', 'vero.yaml'));
  expect(configPath({ config: 'other.yaml' }, deep)).toBe('other.yaml');
});
