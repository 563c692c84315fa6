import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'coverage/**',
      '.mhs-host/**',
      'test-artifacts/**',
      '.test-build/**',
      'dist/**',
      '.dist-*/**',
      'src/console/static/**',
      'src/console/dist/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='Date'][property.name='now']",
          message: 'Use the injected Clock (src/core/clock.ts).',
        },
      ],
    },
  },
  {
    files: ['src/core/**/*.ts', 'machines/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            'node:fs*',
            'node:net',
            'node:http',
            'node:child_process',
            'better-sqlite3',
            'pg',
            '../src/mhs/*',
            '../src/engine/*',
          ],
        },
      ],
    },
  },
  {
    files: ['src/core/clock.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
);
