/** `vero run`: starts a compiled task under `harbor run -p`, with the optimizer's gateway token when it has a gateway. */
import { spawn } from 'node:child_process';
import { Command } from 'commander';
import { compiledServeConfig, gatewayLaunch } from '../infra/gateway-launch';
import { ConfigError } from '../model/errors';

/** A word as a POSIX shell reads it: as it is when it holds nothing special, else single-quoted. */
const shellWord = (w: string) => (/^[A-Za-z0-9_/.:=@%+,-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`);

interface RunFlags {
  harbor: string;
  print?: boolean;
}

export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description('run a compiled task (vero build output) with harbor run -p; with a gateway, the optimizer gets its own scoped token')
    .argument('<task>', 'the task dir (vero build -o)')
    .argument('[harborArgs...]', 'passed to harbor run as they are, after --: e.g. -- -a <agent> -m <model> -e docker')
    .option('--harbor <bin>', 'the harbor executable', 'harbor')
    .option('--print', 'print the environment and the harbor command instead of running it (for CI or a wrapper)')
    .addHelpText(
      'after',
      `
With a gateway (build.yaml "gateway:"), each run makes a new producer token: its SHA-256 goes to the eval
sidecar (${'$'}VERO_GATEWAY_PRODUCER_TOKEN_SHA256, which the task's compose file requires), the token itself to the
optimizer's agent as --ae OPENAI_API_KEY / OPENAI_BASE_URL / ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL (and
LLM_API_KEY / LLM_BASE_URL, OPENAI_HOST / OPENAI_BASE_PATH for openhands-sdk and goose). The upstream keys stay in
this environment, for the sidecar only. Exit code: harbor's.

  vero run /tmp/my-task -- -a claude-code -m anthropic/claude-sonnet-4-5 -e docker`,
    )
    .action(async (task: string, harborArgs: string[], o: RunFlags) => {
      let hasGateway = false;
      try {
        if (!compiledServeConfig(task)) throw new ConfigError('no environment/sidecar/serve.json');
        hasGateway = Boolean(compiledServeConfig(task)?.gateway);
      } catch (e) {
        throw new ConfigError(`<task>: ${task} is not a vero build output (${(e as Error).message.split('\n')[0]})`);
      }
      const launch = hasGateway ? gatewayLaunch(task) : null;
      const argv = ['run', '-p', task, ...(launch?.harborArgs ?? []), ...harborArgs];
      if (o.print) {
        for (const [k, v] of Object.entries(launch?.env ?? {})) process.stdout.write(`export ${k}=${shellWord(v)}\n`);
        process.stdout.write(`${[o.harbor, ...argv].map(shellWord).join(' ')}\n`);
        return;
      }
      const child = spawn(o.harbor, argv, { stdio: 'inherit', env: { ...process.env, ...launch?.env } });
      const forward = (sig: NodeJS.Signals) => child.kill(sig);
      process.on('SIGINT', forward).on('SIGTERM', forward);
      const code = await new Promise<number>((resolve, reject) => {
        child.on('error', (e: NodeJS.ErrnoException) =>
          reject(e.code === 'ENOENT' ? new ConfigError(`--harbor: ${o.harbor} was not found (install Harbor, or pass --harbor <bin>)`) : e),
        );
        child.on('exit', (c, signal) => resolve(c ?? (signal ? 128 : 1)));
      });
      process.exitCode = code;
    });
}
