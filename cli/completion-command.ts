/**
 * `vero completion bash|zsh|fish`: a completion script generated from the commands and options themselves
 * (commander's tree), so it cannot drift from `--help`.
 */
import { Command, Option } from 'commander';
import { shellWord } from '../model/shell-word';

interface CommandSpec {
  name: string;
  description: string;
  flags: { long: string; short?: string; description: string; takesValue: boolean }[];
}

function specsOf(program: Command): CommandSpec[] {
  return program.commands
    .map((c) => ({
      name: c.name(),
      description: c
        .description()
        .split(/[.;:(]/)[0]!
        .trim(),
      flags: [...(c.options as readonly Option[]), new Option('-h, --help', 'display help')]
        .filter((o) => o.long)
        .map((o) => ({
          long: o.long!,
          ...(o.short ? { short: o.short } : {}),
          description: o.description,
          takesValue: o.required || o.optional,
        })),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

function bashCompletion(program: Command): string {
  const specs = specsOf(program);
  const cases = specs
    .map((s) => `    ${s.name}) opts=${shellWord(s.flags.flatMap((f) => [f.long, ...(f.short ? [f.short] : [])]).join(' '))} ;;`)
    .join('\n');
  return `# vero completion for bash (and zsh with bashcompinit): eval "$(vero completion bash)"
_vero() {
  local cur=\${COMP_WORDS[COMP_CWORD]} cmd=\${COMP_WORDS[1]} opts=''
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W ${shellWord(['--help', '--version', ...specs.map((s) => s.name)].join(' '))} -- "$cur"))
    return
  fi
  case "$cmd" in
${cases}
  esac
  if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$opts" -- "$cur")); else COMPREPLY=($(compgen -f -- "$cur")); fi
}
complete -o default -F _vero vero
`;
}

function zshCompletion(program: Command): string {
  return `# vero completion for zsh: eval "$(vero completion zsh)"
autoload -U +X bashcompinit && bashcompinit
${bashCompletion(program).split('\n').slice(1).join('\n')}`;
}

function fishCompletion(program: Command): string {
  const specs = specsOf(program);
  const lines = ['# vero completion for fish: vero completion fish | source', 'complete -c vero -f'];
  for (const s of specs) {
    lines.push(`complete -c vero -n __fish_use_subcommand -a ${shellWord(s.name)} -d ${shellWord(s.description)}`);
    for (const f of s.flags) {
      const short = f.short ? ` -s ${f.short.replace(/^-/, '')}` : '';
      lines.push(
        `complete -c vero -n ${shellWord(`__fish_seen_subcommand_from ${s.name}`)} -l ${f.long.replace(/^--/, '')}${short}${f.takesValue ? ' -r' : ''} -d ${shellWord(f.description.slice(0, 80))}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

const SHELLS = { bash: bashCompletion, zsh: zshCompletion, fish: fishCompletion } as const;

export function registerCompletionCommand(program: Command, fullProgram: () => Command): void {
  program
    .command('completion')
    .description(
      'print a shell completion script for every command and option: eval "$(vero completion bash)" (or zsh); vero completion fish | source',
    )
    .argument('<shell>', 'bash, zsh or fish')
    .action((shell: string) => {
      const make = SHELLS[shell as keyof typeof SHELLS];
      if (!make) {
        const { ConfigError } = require('../model/errors') as typeof import('../model/errors');
        throw new ConfigError(`<shell>: expected bash, zsh or fish, got "${shell}"`);
      }
      process.stdout.write(make(fullProgram()));
    });
}
