// ESLint (flat config) with typescript-eslint; Prettier owns formatting.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
              regex: '^(?!@temporalio/workflow$|\\.\\./model/[\\w-]+$|\\.\\./harbor/job-name$|\\./[\\w-]+$|\\.\\./activities(/[\\w-]+)?$)',
              message:
                'workflow code may import only @temporalio/workflow, ../model/*, ../harbor/job-name and ./* (I/O belongs in an activity)',
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
  {
    // The model is pure (schemas, rules, names): no I/O, nothing above it. An allow-list.
    files: ['model/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!zod$|picomatch$|jstat$|seedrandom$|@noble/hashes/(sha2|utils)$|node:crypto$|@temporalio/common$|\\./[\\w-]+$)',
              message:
                'model/ is pure: it may import only zod, picomatch, jstat, seedrandom, @noble/hashes (pure-JS sha256), node:crypto, @temporalio/common and ./* (I/O goes in infra/)',
            },
          ],
        },
      ],
    },
  },
);
