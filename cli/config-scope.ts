/** The config digest that scopes `vero list`, `best` and `report`: evaluations of the same tasks, harbor config and scoring. */
import { resolveTasks } from '../harbor/task-source';
import { configDigest } from '../model/evaluation/identity';
import { settingsFrom } from '../client/eval-input';
import { commandConfig, configPath, type ConnectionFlags } from './options';

export function digestScope(o: ConnectionFlags & { all?: boolean }): string | undefined {
  const file = configPath(o);
  if (o.all || !file) return undefined;
  const cfg = commandConfig(file);
  return configDigest(resolveTasks(cfg), settingsFrom(cfg));
}
