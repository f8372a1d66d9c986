// ESLint (flat config): typescript-eslint's recommended rules plus a few that catch real bugs
// here: promises nobody awaits (a Worker drops their errors), and `in` / `obj[key]` lookups on
// plain objects keyed by user text (words like "constructor" hit Object.prototype).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import globals from 'globals';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'build/generated/',
      '.wrangler/',
      'dist/',
      'assembly/',
      '**/*.d.ts',
      'client/dist/',
      'client/src/generated/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    files: ['**/*.ts'],
    languageOptions: {
      globals: { ...globals.node, ...globals.browser, ...globals.worker },
      parserOptions: {
        project: ['./tsconfig.json', './build/tsconfig.json', './browser/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      'no-prototype-builtins': 'error',
      // `key in table` on an object literal matches Object.prototype's names; use a Map or a
      // null-prototype object (and `Object.hasOwn`).
      'no-restricted-syntax': [
        'error',
        {
          selector: "BinaryExpression[operator='in'][right.type='Identifier'][right.name=/^[A-Z][A-Z0-9_]*$/]",
          message:
            'Lookup tables keyed by user text must be a Map or a null-prototype object; use .has()/Object.hasOwn.',
        },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    // Tests, and the playground page that renders answers of the API and of the offline scorer
    // side by side, read untyped JSON.
    files: ['test/**/*.ts', 'bench/**/*.ts', 'eval/**/*.ts', 'browser/playground/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Tool configs are outside the typed projects.
    files: ['*.config.ts', 'browser/vite.config.ts', '*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { parserOptions: { project: false, projectService: false } },
  },
);
