import t from 'tap'
import {
  MESSAGE_LIMITS,
  formatViolation,
  renderWarnings,
} from '../../src/policy/messages/render.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { jsonEqual } from '../../src/policy/kube/object.ts'
import { parseFieldPath, valueAtPath } from '../../src/policy/kube/object-path.ts'
import { ratchet } from '../../src/policy/ratchet.ts'
import type { ValidationInput } from '../../src/policy/result.ts'
import { validateWebhookConfig } from '../../src/policy/webhook-config.ts'

const OK_URL = 'https://hooks.example.com/check'

function config(validating: unknown[], labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'toolhive.stacklok.dev/v1alpha1',
    kind: 'MCPWebhookConfig',
    metadata: { name: 'hooks', namespace: 'default', labels },
    spec: { validating },
  }
}

function update(oldObject: KubeObject, object: KubeObject): ValidationInput {
  return { operation: 'UPDATE', object, oldObject }
}

const validateConfig = (input: ValidationInput) =>
  ratchet(input, (object) => validateWebhookConfig({ ...input, object }))

t.test('MCPWebhookConfig updates', async (t) => {
  const httpHook = { name: 'a', url: 'http://x' }
  const cases: {
    name: string
    oldObject: KubeObject
    object: KubeObject
    violations: string[]
    warnings: string[]
  }[] = [
    {
      name: 'an untouched pre-existing violation is allowed with a warning',
      oldObject: config([httpHook]),
      object: config([httpHook], { team: 'a' }),
      violations: [],
      warnings: [
        'spec.validating[0].url: pre-existing violation kept: Invalid value: "http://x": must use https unless tlsConfig.insecureSkipVerify is true',
      ],
    },
    {
      name: 'editing another webhook keeps the old violation a warning',
      oldObject: config([httpHook, { name: 'b', url: OK_URL }]),
      object: config([httpHook, { name: 'b', url: OK_URL, timeout: '5s' }]),
      violations: [],
      warnings: [
        'spec.validating[0].url: pre-existing violation kept: Invalid value: "http://x": must use https unless tlsConfig.insecureSkipVerify is true',
      ],
    },
    {
      name: 'changing the violating field to another bad value is denied',
      oldObject: config([httpHook]),
      object: config([{ name: 'a', url: 'http://y' }]),
      violations: [
        'spec.validating[0].url: Invalid value: "http://y": must use https unless tlsConfig.insecureSkipVerify is true',
      ],
      warnings: [],
    },
    {
      name: 'a newly introduced violation is denied, the old one only warned about',
      oldObject: config([httpHook]),
      object: config([{ ...httpHook, timeout: '31s' }]),
      violations: [
        'spec.validating[0].timeout: Invalid value: "31s": must be between 1s and 30s, or 0 for the 10s default',
      ],
      warnings: [
        'spec.validating[0].url: pre-existing violation kept: Invalid value: "http://x": must use https unless tlsConfig.insecureSkipVerify is true',
      ],
    },
    {
      name: 'a second rule broken by the same unchanged value is denied',
      oldObject: config([
        { name: 'a', url: 'http://x#f', tlsConfig: { insecureSkipVerify: true } },
      ]),
      object: config([{ name: 'a', url: 'http://x#f' }]),
      violations: [
        'spec.validating[0].url: Invalid value: "http://x#REDACTED": must use https unless tlsConfig.insecureSkipVerify is true',
      ],
      warnings: [
        'spec.validating[0].url: pre-existing violation kept: Invalid value: "http://x#REDACTED": must not contain a fragment',
      ],
    },
    {
      name: 'fixing the violation needs no ratchet',
      oldObject: config([httpHook]),
      object: config([{ name: 'a', url: OK_URL }]),
      violations: [],
      warnings: [],
    },
    {
      name: 'a missing required field stays a warning while its parent is untouched',
      oldObject: config([{ url: OK_URL }]),
      object: config([{ url: OK_URL }], { team: 'a' }),
      violations: [],
      warnings: ['spec.validating[0].name: pre-existing violation kept: Required value'],
    },
    {
      name: 'editing the parent of a missing required field is denied',
      oldObject: config([{ url: OK_URL }]),
      object: config([{ url: OK_URL, timeout: '5s' }]),
      violations: ['spec.validating[0].name: Required value'],
      warnings: [],
    },
    {
      name: 'a webhook inserted before a bad one moves its index, so it is denied',
      oldObject: config([httpHook]),
      object: config([{ name: 'b', url: OK_URL }, httpHook]),
      violations: [
        'spec.validating[1].url: Invalid value: "http://x": must use https unless tlsConfig.insecureSkipVerify is true',
      ],
      warnings: [],
    },
    {
      name: 'an untouched empty spec is allowed with a warning',
      oldObject: { kind: 'MCPWebhookConfig', spec: {} },
      object: { kind: 'MCPWebhookConfig', metadata: { labels: { a: 'b' } }, spec: {} },
      violations: [],
      warnings: [
        'spec: pre-existing violation kept: Required value: at least one validating or mutating webhook must be defined',
      ],
    },
    {
      name: 'a stored object without spec stays editable',
      oldObject: { kind: 'MCPWebhookConfig' },
      object: { kind: 'MCPWebhookConfig', metadata: { labels: { a: 'b' } } },
      violations: [],
      warnings: [
        'spec: pre-existing violation kept: Required value: at least one validating or mutating webhook must be defined',
      ],
    },
  ]
  for (const { name, oldObject, object, violations, warnings } of cases) {
    const result = validateConfig(update(oldObject, object))
    t.same(result.violations.map(formatViolation), violations, name)
    t.same(result.warnings, warnings, `${name}: warnings`)
    t.ok(
      renderWarnings(result.warnings).every((w) => w.length <= MESSAGE_LIMITS.warningChars),
      `${name}: short warnings`,
    )
  }
})

t.test('CREATE and a missing oldObject are not ratcheted', async (t) => {
  const bad = config([{ name: 'a', url: 'http://x' }])
  t.equal(
    validateConfig({ operation: 'CREATE', object: bad, oldObject: undefined }).violations.length,
    1,
  )
  t.equal(
    validateConfig({ operation: 'UPDATE', object: bad, oldObject: undefined }).violations.length,
    1,
  )
  t.same(validateConfig({ operation: 'DELETE', object: undefined, oldObject: bad }), {
    violations: [],
    warnings: [],
  })
})

t.test("the rule's own warnings stay beside ratchet warnings", async (t) => {
  const hooks = [
    { name: 'a', url: 'http://x' },
    { name: 'b', url: 'http://y', tlsConfig: { insecureSkipVerify: true } },
  ]
  const result = validateConfig(update(config(hooks), config(hooks, { team: 'a' })))
  t.same(result.violations, [])
  t.same(result.warnings, [
    'spec.validating[1].url: plain http is unencrypted; allowed only because insecureSkipVerify is true',
    'spec.validating[0].url: pre-existing violation kept: Invalid value: "http://x": must use https unless tlsConfig.insecureSkipVerify is true',
  ])
})

t.test('field paths', async (t) => {
  const object = JSON.parse(
    '{"spec":{"validating":[{"url":"a"},{"url":"b"}]},"data":{"a.b":"dot","__proto__":"p","0":"zero"}}',
  ) as unknown
  const cases: [string, { value: unknown } | undefined][] = [
    ['spec.validating[1].url', { value: 'b' }],
    ['spec.validating[2].url', { value: undefined }],
    ['spec.validating[x]', { value: undefined }],
    ['data[a.b]', { value: 'dot' }],
    ['data[__proto__]', { value: 'p' }],
    ['data[0]', { value: 'zero' }],
    ['data.constructor', { value: undefined }],
    ['spec.validating[0].url.length', { value: undefined }],
    ['', { value: object }],
    ['spec..x', undefined],
    ['spec.', undefined],
    ['spec[1', undefined],
    ['spec[1]x', undefined],
  ]
  for (const [path, expected] of cases) t.same(valueAtPath(object, path), expected, path)
  t.same(parseFieldPath('spec.validating[1].url'), ['spec', 'validating', '1', 'url'])
})

t.test('jsonEqual', async (t) => {
  const deep = (depth: number, leaf: unknown): unknown => {
    let value: unknown = leaf
    for (let i = 0; i < depth; i++) value = { a: [value] }
    return value
  }
  const cases: [unknown, unknown, boolean][] = [
    [{ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }, true],
    [{ a: 1 }, { a: 1, b: undefined }, false],
    [[1, 2], [2, 1], false],
    [{}, [], false],
    [null, {}, false],
    [JSON.parse('{"__proto__":1}'), {}, false],
    [deep(100_000, 1), deep(100_000, 1), true],
    [deep(100_000, 1), deep(100_000, 2), false],
  ]
  cases.forEach(([a, b, equal], i) => t.equal(jsonEqual(a, b), equal, `case ${i}`))
})
