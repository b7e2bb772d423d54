// ESLint (flat config) with typescript-eslint; Prettier owns formatting.
import * as fs from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import longFunctions from './lint/long-functions.cjs';

// The rules the docs state about where things live (docs/architecture.md), over the product's code. bench/ and
// test/ start and inspect processes, Docker and files of their own, and are not covered.
const PRODUCT_DIRS = ['workflows', 'activities', 'model', 'infra', 'client', 'worker', 'cli', 'compiler', 'sidecar', 'harbor'];
// The fork server (it starts Harbor's Python), and a compiled task's run (its jobs dir is the caller's, not the home's).
const HARBOR_HELPERS = /^harbor\/(forkserver|compiled-task-run)\.ts$/;
// Every process starter a harbor could be started with, and the only files that may import it: harbor is
// started only by harbor/launch.ts (Mode A's activities run the user's inference, scorer and harness commands;
// the sidecar its W&B logger). A new starter of child processes needs execa or node:child_process, which only
// the process helpers import (the first rule below).
const PROCESS_STARTERS = {
  forkHarbor: ['harbor/launch.ts'],
  runInForeground: ['harbor/launch.ts'],
  runInGroup: ['harbor/launch.ts', 'activities/mode-a.ts', 'activities/mode-a-harness.ts'],
  startHelperProcess: ['sidecar/wandb-reporter.ts'],
};
const STARTER_MODULES = '/(process-group|foreground|forkserver)$/';
const PROCESS_HELPERS = /^infra\/(process-group|docker|git|dev-server|foreground)\.ts$/;
const LAYOUT_NAMES =
  'repos|worktrees|results|runs|jobs|chunks|stale-jobs|harbor-cwd|mode-a|temporal\\.db|config\\.json|lock\\.json|result\\.json|trial\\.log';
// Harbor's job and trial dirs (model/harbor/paths.ts).
const HARBOR_DIR_NAMES = 'agent|verifier|artifacts';
const HARBOR_FILE_NAMES =
  'result\\.json|trial\\.log|exception\\.txt|reward\\.json|reward\\.txt|trajectory\\.json|config\\.json|lock\\.json';
const LAYOUT_SUFFIXES = '\\.(pid|harbor\\.log|harbor-failures|pruned-usage\\.json)';

/** Each rule: the files it covers, and what it restricts there (ESLint's own rules, combined per file below). */
const PLACEMENT_RULES = [
  {
    // Every child process through the process helpers (and the fork server's Python through harbor/forkserver.ts).
    covers: (f) => !PROCESS_HELPERS.test(f) && f !== 'harbor/forkserver.ts',
    imports: [
      { name: 'execa', message: 'start child processes through infra/process-group.ts (or infra/foreground.ts, git.ts, docker.ts)' },
      {
        name: 'node:child_process',
        message: 'start child processes through infra/process-group.ts (or infra/foreground.ts, git.ts, docker.ts)',
      },
      {
        name: 'child_process',
        message: 'start child processes through infra/process-group.ts (or infra/foreground.ts, git.ts, docker.ts)',
      },
    ],
  },
  ...Object.entries(PROCESS_STARTERS).map(([name, allowed]) => ({
    // Harbor is started only by harbor/launch.ts: each process starter is imported only where the map allows.
    covers: (f) => !allowed.includes(f),
    syntax: [
      {
        selector: `ImportSpecifier[imported.name='${name}'], ExportSpecifier[local.name='${name}']`,
        message: `harbor is started only by harbor/launch.ts: ${name} is imported only by ${allowed.join(', ')} (eslint.config.mjs PROCESS_STARTERS)`,
      },
    ],
  })),
  {
    // (and not reached around by a namespace import, a re-export of all, a require() or an import() of their modules)
    covers: () => true,
    syntax: [
      `ImportDeclaration[source.value=${STARTER_MODULES}] > ImportNamespaceSpecifier`,
      `ExportAllDeclaration[source.value=${STARTER_MODULES}]`,
      `CallExpression[callee.name='require'][arguments.0.value=${STARTER_MODULES}]`,
      `ImportExpression[source.value=${STARTER_MODULES}]`,
    ].map((selector) => ({
      selector,
      message: 'import the process helpers by name (harbor is started only by harbor/launch.ts: PROCESS_STARTERS)',
    })),
  },
  {
    // Activities are thin wrappers: the file system is reached through infra/ helpers.
    covers: (f) => f.startsWith('activities/'),
    imports: ['node:fs', 'fs', 'node:fs/promises', 'fs/promises'].map((name) => ({
      name,
      message: 'activities are thin: do file I/O in an infra/ helper (one per side effect)',
    })),
  },
  {
    // Every docker command through infra/docker.ts; every git command through infra/git.ts.
    covers: (f) => f !== 'infra/docker.ts',
    syntax: [
      { selector: "CallExpression[arguments.0.value='docker']", message: 'run docker through infra/docker.ts' },
      { selector: "ArrayExpression[elements.0.value='docker']", message: 'run docker through infra/docker.ts' },
    ],
  },
  {
    covers: (f) => f !== 'infra/git.ts',
    syntax: [
      { selector: "CallExpression[arguments.0.value='git']", message: 'run git through infra/git.ts' },
      { selector: "ArrayExpression[elements.0.value='git']", message: 'run git through infra/git.ts' },
    ],
  },
  {
    // The home's layout and Harbor's job dir are spelled only in model/paths.ts (the compiled task's layout is
    // the compiler's and the sidecar's own).
    covers: (f) => !/^model\/(harbor\/)?paths\.ts$/.test(f) && !/^(compiler|sidecar)\//.test(f) && !HARBOR_HELPERS.test(f),
    syntax: [
      {
        selector: `CallExpression[callee.property.name=/^(join|resolve)$/] > Literal[value=/^(${LAYOUT_NAMES})$/]`,
        message: 'the on-disk layout is spelled only in model/paths.ts: use homePaths/runPaths/harborJobFiles',
      },
      {
        selector: `Literal[value=/^[^/]*${LAYOUT_SUFFIXES}$/], TemplateElement[value.raw=/${LAYOUT_SUFFIXES}$/]`,
        message: 'the on-disk layout is spelled only in model/paths.ts: use homePaths/runPaths/harborJobFiles',
      },
    ],
  },
  {
    // harbor/ is Harbor's machinery: it imports nothing above it (the model, infra/ and itself only), and nothing
    // of Temporal's (the activity hands it its hooks: heartbeat, cancellation, log).
    covers: (f) => f.startsWith('harbor/'),
    patterns: [
      {
        regex: '^\\.\\./(client|cli|workflows|activities|sidecar|compiler|worker)(/|$)',
        message: 'harbor/ imports nothing above it: hand it what it needs (a hook, a value) from the caller',
      },
      {
        regex: '^@temporalio/',
        message: "harbor/ imports nothing of Temporal's: the activity hands it its hooks (harbor/task-attempt.ts AttemptHooks)",
      },
    ],
  },
  {
    // infra/ is the I/O every layer needs: it imports nothing above it, Harbor's machinery included.
    covers: (f) => f.startsWith('infra/'),
    patterns: [
      {
        regex: '^\\.\\./(harbor|client|cli|workflows|activities|sidecar|compiler|worker)(/|$)',
        message: 'infra/ imports nothing above it (harbor/ included): move the helper to the layer that needs it',
      },
    ],
  },
  {
    // Every file name of Harbor's job and trial dirs is spelled only in model/harbor/paths.ts (the compiled task's
    // own layout is the compiler's and the sidecar's: the sidecar is not covered).
    covers: (f) => !/^model\/(harbor\/)?paths\.ts$/.test(f) && !/^(compiler|sidecar)\//.test(f),
    syntax: [
      {
        selector: `CallExpression[callee.property.name=/^(join|resolve)$/] > Literal[value=/^(${HARBOR_DIR_NAMES}|${HARBOR_FILE_NAMES})$/]`,
        message: "Harbor's job and trial dirs are spelled only in model/harbor/paths.ts: use trialFiles/harborJobFiles",
      },
      {
        // A path in a string or a template (not prose: no white space in it).
        selector: `Literal[value=/^\\S*(^|\\/)(${HARBOR_FILE_NAMES})$/], TemplateElement[value.raw=/^\\S*(^|\\/)(${HARBOR_FILE_NAMES})$/], TemplateElement[value.raw=/^\\S*(^|\\/)(${HARBOR_DIR_NAMES})\\/\\S*$/]`,
        message: "Harbor's job and trial dirs are spelled only in model/harbor/paths.ts: use trialFiles/harborJobFiles",
      },
    ],
  },
  {
    // Every file written whole goes through the atomic writer (others read it: a reader never sees half a file).
    covers: (f) => f !== 'infra/atomic-file.ts',
    properties: [
      { property: 'writeFileSync', message: 'write files through infra/atomic-file.ts (writeFileDurable / writeJsonDurable)' },
      { property: 'writeFile', message: 'write files through infra/atomic-file.ts (writeFileDurable / writeJsonDurable)' },
    ],
  },
  {
    // Everything vero throws is a VeroError (its exit code and retryability from the failure table); the
    // workflows' update validators reject with a plain Error, Temporal's way.
    covers: (f) => !f.startsWith('workflows/'),
    syntax: [
      {
        selector:
          'ThrowStatement > NewExpression[callee.name=/^(Type|Range)?Error$/], ThrowStatement > LogicalExpression > NewExpression[callee.name=/^(Type|Range)?Error$/], ThrowStatement > CallExpression[callee.name=/^(Type|Range)?Error$/]',
        message: 'throw a VeroError (model/errors.ts) so the failure has a type, an exit code and a retryability',
      },
    ],
  },
];

/** One config per distinct combination of placement rules, over the product's files as they are now. */
function placementConfigs() {
  const groups = new Map();
  for (const dir of PRODUCT_DIRS.filter((d) => fs.existsSync(d)))
    for (const rel of fs.readdirSync(dir, { recursive: true })) {
      const f = `${dir}/${rel}`;
      if (!f.endsWith('.ts')) continue;
      const rules = PLACEMENT_RULES.filter((r) => r.covers(f));
      const key = rules.map((r) => PLACEMENT_RULES.indexOf(r)).join(',');
      if (!groups.has(key)) groups.set(key, { rules, files: [] });
      groups.get(key).files.push(f);
    }
  return [...groups.values()].map(({ rules, files }) => ({
    files,
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: rules.flatMap((r) => r.imports ?? []), patterns: rules.flatMap((r) => r.patterns ?? []) },
      ],
      'no-restricted-syntax': ['error', ...rules.flatMap((r) => r.syntax ?? [])],
      'no-restricted-properties': ['error', ...rules.flatMap((r) => r.properties ?? [])],
    },
  }));
}

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      '.tools/',
      '.vero-demo/',
      '.vero-demo-real/',
      '.vero-demo-optimize/',
      'examples/agent-repo/',
      'coverage/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        __dirname: 'readonly',
        require: 'readonly',
        module: 'writable',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  ...placementConfigs(),
  {
    // Functions stay short: at most 60 lines, less the allowance that may only shrink (lint/long-functions.cjs).
    files: PRODUCT_DIRS.map((d) => `${d}/**/*.ts`),
    plugins: { vero: longFunctions },
    rules: { 'vero/max-lines-per-function': 'error' },
  },
  {
    // Workflow code must stay deterministic. An allow-list: the workflow SDK, the pure model, other workflow
    // modules, and activity *types*.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!@temporalio/workflow$|\\.\\./model/([\\w-]+/)?[\\w-]+$|\\./[\\w-]+$|\\.\\./activities(/[\\w-]+)?$)',
              message:
                'workflow code may import only @temporalio/workflow, ../model/*, ../model/<room>/* and ./* (I/O belongs in an activity)',
            },
            {
              group: ['../activities', '../activities/*'],
              message: 'import activity types only: import type { Activities }',
              allowTypeImports: true,
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', { name: 'Date', message: 'use workflowInfo() times; Date is replay-safe but easy to misuse' }],
    },
  },
  ...[
    // The model is pure (schemas, rules, names): no I/O, nothing above it. An allow-list; its rooms (model/harbor/,
    // model/race/, …) reach the rest of the model by '../'.
    { files: ['model/*.ts'], own: '\\./([\\w-]+/)?[\\w-]+$' },
    { files: ['model/*/*.ts'], own: '\\.{1,2}/([\\w-]+/)?[\\w-]+$' },
  ].map(({ files, own }) => ({
    files,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^(?!zod$|picomatch$|jstat$|seedrandom$|@noble/hashes/(sha2|utils)$|node:crypto$|@temporalio/common$|${own})`,
              message:
                'model/ is pure: it may import only zod, picomatch, jstat, seedrandom, @noble/hashes (pure-JS sha256), node:crypto, @temporalio/common and the model (I/O goes in infra/)',
            },
          ],
        },
      ],
    },
  })),
);
