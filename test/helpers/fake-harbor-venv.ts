/**
 * A virtualenv (without pip) whose `bin/harbor` is the console script pip writes for Harbor's entry point (the real
 * one, from test/fixtures/console-scripts), for the fork server's tests: `mainPy` is the fake `harbor/cli/main.py`
 * (null: the package is not installed, so the server cannot import it); `site` gives the venv's site-packages for
 * extra modules.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const CONSOLE_SCRIPTS = path.join(__dirname, '..', 'fixtures', 'console-scripts');

/** The installers' real console scripts for Harbor (test/fixtures/console-scripts/README.md): their file names. */
export const consoleScriptNames = (): string[] => fs.readdirSync(CONSOLE_SCRIPTS).filter((f) => !f.endsWith('.md'));

/** The console script `name` (a file of test/fixtures/console-scripts) with `python` in its shebang. */
export const consoleScript = (name: string, python: string): string =>
  fs.readFileSync(path.join(CONSOLE_SCRIPTS, name), 'utf8').replace('{{PYTHON}}', python);

/** What pip writes for Harbor's entry point, for the Python `python`. */
export const pipScript = (python: string) => consoleScript('pip-23.2.1-install', python);

export interface FakeHarborVenv {
  venv: string;
  /** `<venv>/bin/harbor` */
  harbor: string;
  site: string;
}

export function fakeHarborVenv(venv: string, mainPy: string | null): FakeHarborVenv {
  const python = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
  execFileSync(python, ['-m', 'venv', '--without-pip', venv]);
  const site = sitePackages(venv);
  if (mainPy !== null) installFakeHarbor(site, mainPy);
  const harbor = path.join(venv, 'bin', 'harbor');
  fs.writeFileSync(harbor, pipScript(path.join(venv, 'bin', 'python')), { mode: 0o755 });
  return { venv, harbor, site };
}

/** The venv's site-packages dir. */
export const sitePackages = (venv: string): string =>
  execFileSync(path.join(venv, 'bin', 'python'), ['-c', 'import site; print(site.getsitepackages()[0])'], { encoding: 'utf8' }).trim();

/** Installs the fake `harbor` package (its `harbor/cli/main.py` is `mainPy`) into `site`. */
export function installFakeHarbor(site: string, mainPy: string): void {
  fs.mkdirSync(path.join(site, 'harbor', 'cli'), { recursive: true });
  fs.writeFileSync(path.join(site, 'harbor', '__init__.py'), '');
  fs.writeFileSync(path.join(site, 'harbor', 'cli', '__init__.py'), '');
  fs.writeFileSync(path.join(site, 'harbor', 'cli', 'main.py'), mainPy);
}
