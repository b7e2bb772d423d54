/**
 * vero's fields for the outer run and the trust boundary: `optimizer_harbor_args` (checked at build time, recorded
 * in the task, applied by `vero run` to the outer `harbor run` before the caller's flags), `harness_user: null` and
 * `task_services_use_upstream` (honoured as declared trust decisions, their exposure printed and recorded with the
 * reward), and `wandb` (the sidecar's W&B run, its mode settled at build time).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { parse as parseYaml } from 'yaml';
import { BuildConfigFile, loadBuildConfig, readBuildDocument } from '../../compiler/build-config';
import { buildTaskDir, missingSecrets } from '../../compiler/compile';
import { printConfig } from '../../compiler/print-config';
import { isolationFor } from '../../harbor/isolation';
import { writeEnvFile } from '../../infra/env-file';
import { clientEnvFor } from '../../model/gateway/policy';
import { outerRunArgErrors } from '../../model/harbor/outer-run-args';
import { ServeConfig } from '../../model/compiled-task/serve-config';
import { modeBSettings } from '../../sidecar/engine';
import { isolationRecord } from '../../sidecar/finalize';
import { ROOT, STANDIN, tempDir } from '../helpers/fixtures';
import { runVero } from '../helpers/process';

jest.setTimeout(180_000);

const VERO = path.join(ROOT, 'test/fixtures/vero');
const BENCH = (b: string, f = 'build.yaml') => path.join(VERO, `harness-engineering-bench/${b}/baseline/${f}`);
const refusedFields = (refusals: string[]) => refusals.map((r) => /\(vero format\): ([^:]+):/.exec(r)?.[1]);

describe('optimizer_harbor_args: the outer harbor run’s flags', () => {
  test('checked against what harbor run accepts: values typed, task-breaking and caller-owned flags refused with the reason', () => {
    expect(outerRunArgErrors(['--agent-setup-timeout-multiplier', '4', '--ek', 'app_name=x', '-q', '--max-retries=2'])).toEqual([]);
    expect(
      outerRunArgErrors([
        '-p',
        'elsewhere',
        '-o',
        'jobs',
        '--job-name=j',
        '-e',
        'modal',
        '--extra-docker-compose',
        'x.yaml',
        '--dry-run',
        '--bogus',
        '--agent-setup-timeout-multiplier',
        'four',
        '-k',
        '0',
        '--ek',
        'novalue',
        '--debug=yes',
        '--cpus',
        'all',
      ]),
    ).toEqual([
      '-p is not allowed: the compiled task is the run’s only task',
      '-o is not allowed: the caller chooses it: pass it after `vero run TASK --`',
      '--job-name is not allowed: the caller chooses it: pass it after `vero run TASK --`',
      '-e is not allowed: the caller chooses it: pass it after `vero run TASK --`',
      "--extra-docker-compose is not allowed: it changes the task's containers (a mount could hand the optimizer the sidecar's held-out state)",
      '--dry-run is not allowed: the run would not run or score the optimizer (no reward)',
      '"--bogus": harbor run (0.25.0, 0.26.0) has no such flag',
      '--agent-setup-timeout-multiplier expects a positive number, got "four"',
      '-k expects an integer ≥ 1, got "0"',
      '--ek expects KEY=VALUE, got "novalue"',
      '--debug takes no value',
      '--cpus expects one of auto, limit, request, guarantee, ignore, got "all"',
    ]);
    // Our own build.yaml names the optimizer's environment as a typed field.
    expect(outerRunArgErrors(['--ae', 'A=1'], false)).toEqual(["--ae: set the optimizer's environment with optimizer_env instead"]);
  });

  test('vero’s swe-atlas-qna: its outer-run flag is honoured, no longer refused', () => {
    const doc = readBuildDocument(BENCH('swe-atlas-qna'), {}, {});
    expect(refusedFields(doc.refusals)).not.toContain('optimizer_harbor_args');
    expect(BuildConfigFile.parse(doc.raw).optimizer_harbor_args).toEqual(['--agent-setup-timeout-multiplier', '4']);
  });

  test('our build.yaml: a bad flag is a build error naming the field, all at once', () => {
    const dir = tempDir();
    const file = path.join(dir, 'build.yaml');
    fs.writeFileSync(
      file,
      'name: acme/p\nagent_repo: .\nmode: A\ndataset: d\ninference: {command: x}\nscorer: {dir: s, command: y}\nsplits: [{split: train, access: viewable}]\ntargets: [{split: train}]\nselection_split: train\noptimizer_harbor_args: ["--job-name", "x", "--ae", "A=1"]\n',
    );
    expect(() => loadBuildConfig(file)).toThrow(
      /optimizer_harbor_args: --job-name is not allowed[^\n]*\n.*optimizer_harbor_args: --ae: set the optimizer's environment with optimizer_env instead/,
    );
  });
});

describe('vero’s harness-conformance with isolation off, task services on the upstream, and outer-run flags', () => {
  let out: string;
  let serve: ServeConfig;
  let warnings: string[];
  beforeAll(async () => {
    const dir = path.join(tempDir(), 'conformance');
    fs.cpSync(path.join(VERO, 'examples/harness-conformance'), dir, { recursive: true });
    const yaml = fs
      .readFileSync(path.join(dir, 'build.yaml'), 'utf8')
      // Refused for reasons of their own (not this file's fields).
      .replace('feedback_transcripts: true', 'feedback_transcripts: false')
      .replace('expose_case_resources: true', 'expose_case_resources: false')
      .replace('request_log_attribution: true', 'request_log_attribution: false')
      .replace(
        'harness_user: harness',
        'harness_user: null\ntask_services_use_upstream: true\noptimizer_harbor_args: ["--agent-setup-timeout-multiplier", "4", "--ae", "UV_TOOL_BIN_DIR=/opt/bin", "--ek", "app_name=conformance"]',
      );
    fs.writeFileSync(path.join(dir, 'build.yaml'), yaml);
    const git = (...a: string[]) =>
      execFileSync('git', ['-C', path.join(dir, 'target'), '-c', 'user.name=t', '-c', 'user.email=t@t', ...a]);
    git('init', '-q');
    git('add', '-A');
    git('commit', '-qm', 'seed');
    out = path.join(tempDir(), 'task');
    const r = await buildTaskDir(path.join(dir, 'build.yaml'), out, {
      skipSecretCheck: true,
      linkRuntime: true,
      params: { target_model: 'openai/gpt-5.4-mini' },
    });
    warnings = r.warnings;
    serve = ServeConfig.parse(JSON.parse(fs.readFileSync(path.join(out, 'environment/sidecar/serve.json'), 'utf8')));
  });

  test('the build prints the exposure; the task’s files say no isolation and task services on the upstream', () => {
    expect(warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^harness_user: null — candidate code runs WITHOUT harness isolation.*MODAL_TOKEN_ID, MODAL_TOKEN_SECRET, WANDB_API_KEY, WANDB_BASE_URL, OPENAI_API_KEY/,
        ),
        expect.stringMatching(/^task_services_use_upstream: .*raw upstream key OPENAI_API_KEY as OPENAI_API_KEY .*bypass the gateway/),
        "optimizer_harbor_args: --ae UV_TOOL_BIN_DIR become optimizer_env (the optimizer's environment, after agent_env)",
      ]),
    );
    expect(serve.harness_user).toBeNull();
    expect(serve.task_services_use_upstream).toBe(true);
    // finalize records the reward as produced without isolation, naming what candidate code could read.
    expect(isolationRecord(serve)).toEqual({
      harness_user: null,
      task_services_use_upstream: true,
      exposure: expect.stringContaining('OPENAI_API_KEY) and held-out state; task services had the raw upstream key'),
    });
    expect(isolationRecord({ ...serve, harness_user: 'harness', task_services_use_upstream: false })).toBeNull();
    // optimizer_harbor_args' --ae joined agent_env in the optimizer's environment, over agent_env's value.
    const compose = parseYaml(fs.readFileSync(path.join(out, 'environment/docker-compose.yaml'), 'utf8')) as {
      services: Record<string, { environment: Record<string, string> }>;
    };
    expect(compose.services.main!.environment).toMatchObject({ UV_TOOL_BIN_DIR: '/opt/bin', BASH_MAX_TIMEOUT_MS: '1800000' });
  });

  test('the nested harbor of an evaluation runs as the sidecar’s user; the OpenAI variables name the upstream, the gateway moves to VERO_AGENT_INFERENCE_*', () => {
    const envFile = path.join(tempDir(), 'token.json');
    writeEnvFile(envFile, clientEnvFor(serve.gateway!.upstreams, 'vero-eval-token', `${serve.gateway!.candidate_base_url}/task/{task}`));
    const before = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = 'sk-upstream-for-task-services';
    try {
      const settings = modeBSettings(serve, envFile, 'agent');
      expect(settings.isolation!.runAs).toBeNull();
      const iso = isolationFor(settings, {}, [], 'conformance-01');
      expect(iso.uid).toBeUndefined();
      expect(iso.env).toMatchObject({
        OPENAI_API_KEY: 'sk-upstream-for-task-services',
        OPENAI_BASE_URL: 'https://api.openai.com/v1',
        OPENAI_API_BASE: 'https://api.openai.com/v1',
        VERO_AGENT_INFERENCE_API_KEY: 'vero-eval-token',
        VERO_AGENT_INFERENCE_BASE_URL: `${serve.gateway!.candidate_base_url}/task/conformance-01/v1`,
        LLM_API_KEY: 'vero-eval-token',
      });
      expect(iso.env.OPENAI_HOST).toBeUndefined(); // goose's host would pair the gateway with the upstream's key
      // The same task isolated: the harness user, and the gateway's token as the OpenAI key.
      const isolated = modeBSettings({ ...serve, harness_user: 'harness', task_services_use_upstream: false }, envFile, 'agent');
      expect(isolated.isolation!.runAs).toBe('harness');
      expect(isolationFor(isolated, {}, [], 'conformance-01').env.OPENAI_API_KEY).toBe('vero-eval-token');
    } finally {
      if (before === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = before;
    }
  });

  test('vero run hands the outer harbor the build’s flags after its defaults and before the caller’s; agent_env’s tool-call caps stand', async () => {
    const dir = tempDir();
    const log = path.join(dir, 'harbor.jsonl');
    const env = { HARBOR_STANDIN_LOG: log, HARBOR_STANDIN_TIME_SCALE: '0', HARBOR_STANDIN_STATE_DIR: path.join(dir, 'state') };
    const argvOf = async (runArgs: string[]) => {
      fs.rmSync(log, { force: true });
      await runVero(['run', out, '--harbor', STANDIN, ...runArgs], env);
      const start = fs
        .readFileSync(log, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { event: string; argv: string[] })
        .find((l) => l.event === 'start');
      return start!.argv;
    };
    const jobs = path.join(dir, 'jobs');
    const argv = await argvOf(['--', '-a', 'claude-code', '-e', 'docker', '-o', jobs, '--agent-setup-timeout-multiplier', '2']);
    const at = (flag: string, value: string) => argv.findIndex((a, i) => a === flag && argv[i + 1] === value);
    expect(argv.slice(0, 3)).toEqual(['run', '-p', out]);
    // vero's outer retry, then the build's flags, then the caller's (the later multiplier wins in Harbor).
    expect(at('--max-retries', '1')).toBeGreaterThan(0);
    expect(at('--agent-setup-timeout-multiplier', '4')).toBeGreaterThan(at('--max-retries', '1'));
    expect(at('--ek', 'app_name=conformance')).toBe(at('--agent-setup-timeout-multiplier', '4') + 2);
    expect(at('-a', 'claude-code')).toBeGreaterThan(at('--ek', 'app_name=conformance'));
    expect(at('--agent-setup-timeout-multiplier', '2')).toBeGreaterThan(at('-a', 'claude-code'));
    // The build's agent_env sets claude-code's tool-call caps (1800000 ms): vero run's default cap leaves them be.
    expect(argv.filter((a) => a.includes('TIMEOUT_MS'))).toEqual([]);
    expect(argv).not.toContain('UV_TOOL_BIN_DIR=/opt/bin'); // it is the container's environment, not an --ae item
    // An explicit --tool-timeout is the caller's choice and wins.
    const capped = await argvOf(['--tool-timeout', '120', '--', '-a', 'claude-code', '-e', 'docker', '-o', jobs]);
    expect(capped).toEqual(expect.arrayContaining(['BASH_DEFAULT_TIMEOUT_MS=120000', 'BASH_MAX_TIMEOUT_MS=120000']));
  });
});

describe('harness_user and task_services_use_upstream in vero’s benchmarks', () => {
  test.each(['browsecomp-plus', 'swe-atlas-qna', 'tau3'])('%s: both honoured, with the exposure noted', (bench) => {
    const doc = readBuildDocument(BENCH(bench), {}, {});
    expect(refusedFields(doc.refusals)).not.toEqual(expect.arrayContaining(['harness_user']));
    expect(refusedFields(doc.refusals)).not.toContain('task_services_use_upstream');
    const c = BuildConfigFile.parse(doc.raw);
    expect(c).toMatchObject({ harness_user: null, task_services_use_upstream: true });
    const printed = printConfig(BENCH(bench)).text;
    expect(printed).toMatch(/^# note: harness_user: null — candidate code runs WITHOUT harness isolation/m);
    expect(printed).toMatch(/^# note: task_services_use_upstream: the nested harbor run .* gets the raw upstream key OPENAI_API_KEY/m);
  });

  test('vero’s rule: task_services_use_upstream with an isolated harness is refused (the key would reach it anyway)', () => {
    const dir = path.join(tempDir(), 'tau3');
    fs.cpSync(path.dirname(path.dirname(BENCH('tau3'))), dir, { recursive: true });
    const file = path.join(dir, 'baseline/build.yaml');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('harness_user: null', 'harness_user: harness'));
    expect(() => loadBuildConfig(file)).toThrow(/task_services_use_upstream: needs harness_user: null/);
  });
});

describe('wandb', () => {
  const wandbOf = (doc: { raw: unknown }) => (doc.raw as { wandb?: unknown }).wandb;

  test('a benchmark file’s section (no mode) is the sidecar’s online run, with vero’s fields, and its key required at build', () => {
    const doc = readBuildDocument(BENCH('terminal-bench'), {}, {});
    expect(refusedFields(doc.refusals)).not.toContain('wandb');
    expect(wandbOf(doc)).toEqual({
      project: 'harness-engineering-bench',
      group: 'terminal-bench',
      name: 'terminal-bench',
      tags: ['terminal-bench'],
      mode: 'online',
      log_traces: true,
    });
    expect(doc.notes.find((n) => n.startsWith('wandb:'))).toContain('online (the default)');
    // Its key is required from the build host's environment (the file declares it among its secrets too).
    const undeclared = { ...BuildConfigFile.parse(doc.raw), secrets: [] };
    expect(missingSecrets(undeclared, {})).toEqual(['OPENAI_API_KEY', 'WANDB_API_KEY']);
    expect(missingSecrets({ ...undeclared, wandb: { ...undeclared.wandb!, mode: 'offline' } }, {})).toEqual(['OPENAI_API_KEY']);
  });

  test('WANDB_MODE in the build environment (the file sets no mode): offline is a run dir, disabled leaves W&B out, and says so', () => {
    for (const bench of ['terminal-bench', 'gaia', 'swe-bench-pro']) {
      const offline = readBuildDocument(BENCH(bench), {}, { WANDB_MODE: 'offline' });
      expect(wandbOf(offline)).toMatchObject({ mode: 'offline' });
      const doc = readBuildDocument(BENCH(bench), {}, { WANDB_MODE: 'disabled' });
      expect(wandbOf(doc)).toBeUndefined();
      expect(doc.notes).toContain('wandb: disabled (WANDB_MODE in the build environment): nothing is reported to Weights & Biases');
    }
    // A mode written in the file is the file's: the environment does not override it.
    const conformance = (mode: string) =>
      readBuildDocument(path.join(VERO, 'examples/harness-conformance/build.yaml'), { wandb_mode: mode }, { WANDB_MODE: 'disabled' });
    expect(wandbOf(conformance('online'))).toMatchObject({ project: 'vero-conformance', mode: 'online' });
    expect(conformance('sometimes').refusals.find((r) => r.includes('wandb.mode'))).toContain(
      'wandb.mode: "sometimes" (wandb.mode) is not one of online, offline, disabled',
    );
  });

  test('a mode A task (vero’s command backend) with W&B is refused by name: the client is installed beside mode B’s Harbor', () => {
    const file = path.join(tempDir(), 'build.yaml');
    fs.cpSync(path.join(VERO, 'examples/harbor-circle-packing'), path.dirname(file), { recursive: true });
    fs.appendFileSync(file, '\nwandb:\n  project: circles\n  mode: offline\n');
    expect(() => loadBuildConfig(file)).toThrow(/wandb: only in mode B .*set wandb\.mode: disabled or WANDB_MODE=disabled/);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('  mode: offline', '  mode: disabled'));
    expect(() => loadBuildConfig(file)).not.toThrow();
  });
});

describe('targets[].model and .parameters', () => {
  const conformance = (edit: (yaml: string) => string) => {
    const dir = path.join(tempDir(), 'conformance');
    fs.cpSync(path.join(VERO, 'examples/harness-conformance'), dir, { recursive: true });
    const file = path.join(dir, 'build.yaml');
    fs.writeFileSync(file, edit(fs.readFileSync(file, 'utf8')));
    return file;
  };
  const params = { target_model: 'openai/gpt-5.4-mini' };

  test('a target’s model (or its harbor_model_override parameter) is the model of its trusted pass; other parameters are refused', () => {
    const withModel = conformance((y) => y.replace('    max_attempts: 1', '    max_attempts: 1\n    model: openai/gpt-5.4-mini'));
    const doc = readBuildDocument(withModel, params, {});
    expect(refusedFields(doc.refusals)).not.toContain('targets.0.model');
    expect(BuildConfigFile.parse(doc.raw).targets[0]).toMatchObject({ split: 'test', model: 'openai/gpt-5.4-mini' });
    const viaParameter = conformance((y) =>
      y.replace('    max_attempts: 1', '    max_attempts: 1\n    parameters: {harbor_model_override: openai/gpt-5.4-mini}'),
    );
    expect(BuildConfigFile.parse(readBuildDocument(viaParameter, params, {}).raw).targets[0]!.model).toBe('openai/gpt-5.4-mini');
    const other = conformance((y) => y.replace('    max_attempts: 1', '    max_attempts: 1\n    parameters: {temperature: 0}'));
    expect(readBuildDocument(other, params, {}).refusals).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/targets\.0\.parameters: temperature: vero's Harbor backend reads only harbor_model_override/),
      ]),
    );
  });

  test('targets[].max_attempts and rescore_attempts are the runs of each trusted evaluation, written only when not vero’s default 1', () => {
    const twice = conformance((y) =>
      y.replace('    max_attempts: 1', '    max_attempts: 3').replace('rescore_attempts: 1', 'rescore_attempts: 2'),
    );
    const doc = readBuildDocument(twice, params, {});
    expect(doc.refusals.filter((r) => /attempts/.test(r))).toEqual([]);
    const built = BuildConfigFile.parse(doc.raw);
    expect(built.targets[0]).toMatchObject({ split: 'test', max_attempts: 3 });
    expect(built.rescore_attempts).toBe(2);
    const once = BuildConfigFile.parse(
      readBuildDocument(
        conformance((y) => y),
        params,
        {},
      ).raw,
    );
    expect(once.targets[0]!.max_attempts).toBeUndefined(); // vero's default: written only when it is not 1
    expect(once.rescore_attempts).toBeUndefined();
    const many = readBuildDocument(
      conformance((y) => y.replace('    max_attempts: 1', '    max_attempts: 12')),
      params,
      {},
    );
    expect(BuildConfigFile.parse(many.raw).targets[0]!.max_attempts).toBe(10);
    expect(many.notes).toContain('targets.0.max_attempts: 12 lowered to 10, the most vero-harbor makes');
  });

  test('a target model the finalization scope does not allow is refused (every call of the pass would be)', () => {
    const file = conformance((y) => y.replace('    max_attempts: 1', '    max_attempts: 1\n    model: openai/gpt-unlisted'));
    expect(() => loadBuildConfig(file, params)).toThrow(
      /targets\.0\.model: openai\/gpt-unlisted is not allowed by gateway\.scopes\.finalization \(openai\/gpt-5\.4-mini\)/,
    );
  });
});
