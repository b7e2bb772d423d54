/** What race tests set up: a dataset of named copies of one example task, and an agent repo tagged per skill profile. */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DATASET } from './fixtures';

/** A dataset `<dir>/<prefix>` of copies of the example task hello-world, one per name, each named `<prefix>/<name>`. */
export function raceDataset(dir: string, prefix: string, names: readonly string[]): string {
  const out = path.join(dir, prefix);
  for (const name of names) {
    fs.cpSync(path.join(DATASET, 'hello-world'), path.join(out, name), { recursive: true });
    const toml = path.join(out, name, 'task.toml');
    fs.writeFileSync(toml, fs.readFileSync(toml, 'utf8').replace(/^name = ".*"$/m, `name = "${prefix}/${name}"`));
  }
  return out;
}

/** An agent repo with one tag per profile, whose tasks solved (globs) the stand-in's agent profile reads. */
export function raceRepo(dir: string, profiles: readonly (readonly [tag: string, solves: readonly string[]])[]): string {
  const repo = path.join(dir, 'race-agents');
  fs.mkdirSync(repo);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'race@example.invalid');
  git('config', 'user.name', 'race');
  git('config', 'commit.gpgsign', 'false');
  fs.writeFileSync(path.join(repo, 'agent.py'), 'class SkillAgent: pass\n');
  for (const [tag, solves] of profiles) {
    fs.writeFileSync(path.join(repo, 'harbor-standin-agent.json'), JSON.stringify({ solves }));
    git('add', '-A');
    git('commit', '-q', '-m', tag);
    git('tag', tag);
  }
  return repo;
}
