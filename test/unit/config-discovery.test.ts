/** vero.yaml is found as git finds its repo: in the working directory or the nearest parent. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { commandConfig, configPath, connectionSettings } from '../../cli/options';
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

test('a command reads its vero.yaml once: its connection settings and its digest scope share one parse', () => {
  const file = path.join(tempDir('vero-once-'), 'vero.yaml');
  fs.writeFileSync(file, `agent_repo: x\ntasks:\n  source:\n    path: /tmp\ntemporal:\n  address: 10.0.0.1:7233\n`);
  expect(connectionSettings({ config: file }).address).toBe('10.0.0.1:7233');
  // Changed on disk afterwards: this process goes on with what it read.
  fs.writeFileSync(file, `agent_repo: x\ntasks:\n  source:\n    path: /tmp\ntemporal:\n  address: 10.0.0.2:7233\n`);
  expect(commandConfig(file).temporal.address).toBe('10.0.0.1:7233');
  expect(commandConfig(file)).toBe(commandConfig(path.relative(process.cwd(), file)));
});
