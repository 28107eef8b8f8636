// @ts-check
import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import prettier from 'eslint-config-prettier'
import { posix } from 'node:path'

/**
 * The pure folders and what each may import from src/ (docs/architecture.md#architecture): policy/
 * depends on nothing else in src, and inside it the layers only point down: go/ (Go grammar ports)
 * ← messages/ (field errors, quoting, redaction) ← kube/ (object access, names, value checks) ←
 * crd/ and the rules at the top. metrics/ stands alone. test/policy/purity.test.ts applies the same
 * table.
 */
export const LAYERS = [
  { folder: 'src/policy', mayImport: ['src/policy'] },
  { folder: 'src/policy/go', mayImport: ['src/policy/go'] },
  { folder: 'src/policy/messages', mayImport: ['src/policy/messages', 'src/policy/go'] },
  {
    folder: 'src/policy/kube',
    mayImport: ['src/policy/kube', 'src/policy/messages', 'src/policy/go'],
  },
  {
    folder: 'src/policy/crd',
    mayImport: ['src/policy/crd', 'src/policy/kube', 'src/policy/messages', 'src/policy/go'],
  },
  { folder: 'src/metrics', mayImport: ['src/metrics'] },
]

/** A relative specifier, written from `folder`, that does not start in an allowed folder. */
function forbiddenRelative(folder, mayImport) {
  const prefixes = mayImport.map((allowed) => {
    const path = posix.relative(folder, allowed)
    return path === '' ? './' : path.startsWith('..') ? `${path}/` : `./${path}/`
  })
  const escaped = prefixes.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  return `^(?!(${escaped.join('|')}))\\.\\.?/`
}

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
  ...LAYERS.map(({ folder, mayImport }) => ({
    files: [`${folder}/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(node:)?(fs|fs/promises|net|http|https|tls|child_process|timers|process)$',
              message: `${folder}/ is pure: no I/O or process state`,
            },
            { regex: '^(fastify|pino|@kubernetes/client-node)', message: `${folder}/ is pure` },
            {
              regex: forbiddenRelative(folder, mayImport),
              message: `${folder}/ imports only from ${mayImport.join(', ')}`,
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'process', 'setTimeout', 'setInterval', 'Date'],
    },
  })),
  {
    // One e2e environment builder (test/e2e/harness/environment.ts): e2e files and the cluster
    // benchmark get the control plane, CRDs, identity, service, webhooks and operator from it,
    // never by assembling its pieces themselves.
    files: ['test/e2e/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...[
              'admission',
              'audit-log',
              'control-plane',
              'controller-manager',
              'service-network',
            ].map((piece) => ({
              name: `./harness/${piece}.ts`,
              message: 'build the environment with ./harness/environment.ts',
            })),
            {
              name: './harness/operator.ts',
              importNames: ['installReleaseCrds', 'startOperator'],
              message: 'build the environment with ./harness/environment.ts',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['bench/cluster/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./\\.\\./test/e2e/(?!harness/environment\\.ts$)',
              message: 'the e2e harness is reached through test/e2e/harness/environment.ts',
            },
          ],
        },
      ],
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
