// ESLint (flat config) with typescript-eslint; Prettier owns formatting.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.tools/', '.vero-demo/', 'examples/agent-repo/', 'coverage/'] },
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
    // Workflow code must stay deterministic: no Node built-ins, no activity/worker/client imports.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*', 'fs', 'path', 'os', 'child_process', 'crypto'], message: 'workflow code cannot do I/O; use an activity' },
            {
              group: ['@temporalio/activity', '@temporalio/worker', '@temporalio/client', 'execa'],
              message: 'not allowed in workflow code',
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
);
