/** `vero build`: compile a build.yaml into a Harbor task dir. */
import { Command } from 'commander';
import { compileTask } from '../compiler/compile';

export function registerBuildCommand(program: Command): void {
  program
    .command('build')
    .description('compile a build.yaml into a runnable Harbor task directory (optimizer workbench + eval sidecar)')
    .requiredOption('-c, --config <file>', 'build.yaml')
    .requiredOption('-o, --out <dir>', 'output task dir (replaced only when it is a previous build output)')
    .option('--skip-secret-check', 'build even when declared secrets are not set here (the compose file still requires them)')
    .option('--json', 'machine-readable output')
    .action(async (o: { config: string; out: string; skipSecretCheck?: boolean; json?: boolean }) => {
      const r = await compileTask(o.config, o.out, { skipSecretCheck: o.skipSecretCheck });
      if (o.json) process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
      else
        process.stdout.write(
          `built ${r.taskName} (mode ${r.mode}) in ${r.outDir}\nbaseline ${r.baseCommit} from ${r.sourceCommit}\nrun it: harbor run -p ${r.outDir} -a <optimizer agent> -m <model> -e docker\n`,
        );
    });
}
