// @ts-check
import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import prettier from 'eslint-config-prettier'

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.tap/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // policy/ is pure: no I/O, no framework, no process state (DESIGN §2).
    files: ['src/policy/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(node:)?(fs|fs/promises|net|http|https|tls|child_process|timers|process)$',
              message: 'policy/ is pure: no I/O or process state',
            },
            { regex: '^(fastify|pino|@kubernetes/client-node)', message: 'policy/ is pure' },
            {
              regex: '\\.\\./(http|admission|cluster|cli|reconciler)/',
              message: 'policy/ depends on nothing else in src',
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'process', 'setTimeout', 'setInterval', 'Date'],
    },
  },
  {
    // tap's `t.test(name, async (t) => …)` returns a promise tap itself awaits.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-floating-promises': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Tests walk untyped JSON (reviews, patches, stored objects) to assert on it.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
  prettier,
)
