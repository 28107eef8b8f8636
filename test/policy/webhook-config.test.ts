import t from 'tap'
import {
  MESSAGE_LIMITS,
  formatViolation,
  formatViolations,
  renderWarnings,
} from '../../src/policy/messages/render.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import type { ValidationInput } from '../../src/policy/result.ts'
import {
  AT_LEAST_ONE_WEBHOOK,
  sanitiseWebhookName,
  validateWebhookConfig,
} from '../../src/policy/webhook-config.ts'

const URL_OK = 'https://hooks.example.com/check'
const V0 = 'spec.validating[0]'

function config(spec: unknown): KubeObject {
  return {
    apiVersion: 'toolhive.stacklok.dev/v1alpha1',
    kind: 'MCPWebhookConfig',
    metadata: { name: 'hooks', namespace: 'default' },
    spec,
  }
}

/** A valid webhook, with `fields` replacing or adding to it. */
function hook(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: 'audit', url: URL_OK, ...fields }
}

function validate(
  object: KubeObject | undefined,
  operation: ValidationInput['operation'] = 'CREATE',
) {
  return validateWebhookConfig({ operation, object, oldObject: undefined })
}

function rendered(object: KubeObject): string[] {
  return validate(object).violations.map(formatViolation)
}

t.test('valid configs pass without warnings', async (t) => {
  const cases: { name: string; spec: unknown }[] = [
    { name: 'one validating webhook', spec: { validating: [hook()] } },
    { name: 'one mutating webhook', spec: { mutating: [hook()] } },
    {
      name: 'every field set',
      spec: {
        validating: [
          hook({
            timeout: '5s',
            failurePolicy: 'ignore',
            tlsConfig: {
              caSecretRef: { name: 'ca', key: 'ca.crt' },
              clientCertSecretRef: { name: 'client.tls', key: 'tls.crt' },
              clientKeySecretRef: { name: 'client.tls', key: 'tls.key' },
              insecureSkipVerify: false,
            },
            hmacSecretRef: { name: 'hmac', key: 'KEY_NAME' },
          }),
        ],
        mutating: [hook({ name: 'redact', failurePolicy: 'fail', timeout: '30s' })],
      },
    },
    { name: 'empty list beside a non-empty one', spec: { validating: [], mutating: [hook()] } },
    {
      name: 'null optional fields',
      spec: { validating: [hook({ timeout: null, tlsConfig: null })] },
    },
    { name: 'IPv6 host and port', spec: { validating: [hook({ url: 'https://[::1]:8443/v' })] } },
  ]
  for (const { name, spec } of cases)
    t.same(validate(config(spec)), { violations: [], warnings: [] }, name)
})

t.test('at least one webhook in total', async (t) => {
  const message = `spec: Required value: ${AT_LEAST_ONE_WEBHOOK}`
  const cases: { name: string; object: KubeObject | undefined }[] = [
    { name: 'spec: {}', object: config({}) },
    { name: 'both lists empty', object: config({ validating: [], mutating: [] }) },
    { name: 'null lists', object: config({ validating: null, mutating: null }) },
    { name: 'no spec', object: config(undefined) },
    { name: 'null spec', object: config(null) },
    { name: 'no object at all', object: undefined },
  ]
  for (const { name, object } of cases) {
    const result = validate(object)
    t.same(result.violations.map(formatViolation), [message], name)
    t.match(formatViolations(result.violations), AT_LEAST_ONE_WEBHOOK, name)
  }
})

t.test('url', async (t) => {
  const https = 'must use https unless tlsConfig.insecureSkipVerify is true'
  const cases: { url: unknown; insecure?: boolean; violations: string[]; warning?: RegExp }[] = [
    {
      url: 'not-a-valid-url',
      violations: [
        `${V0}.url: Invalid value: "not-a-valid-url": must be an absolute URL with a scheme and host`,
      ],
    },
    { url: 'http://x', violations: [`${V0}.url: Invalid value: "http://x": ${https}`] },
    {
      url: 'http://hooks.svc:8080/v',
      insecure: true,
      violations: [],
      warning: /^spec\.validating\[0\]\.url: plain http is unencrypted/,
    },
    {
      url: URL_OK,
      insecure: true,
      violations: [],
      warning:
        /^spec\.validating\[0\]\.tlsConfig\.insecureSkipVerify: TLS certificate verification/,
    },
    { url: undefined, violations: [`${V0}.url: Required value`] },
    { url: '', violations: [`${V0}.url: Required value`] },
    { url: 42, violations: [`${V0}.url: Invalid value: "integer": must be of type string`] },
    {
      url: 'http:hooks.example.com',
      insecure: true,
      violations: [
        `${V0}.url: Invalid value: "http:hooks.example.com": must be an absolute URL with a scheme and host`,
      ],
    },
    {
      url: 'https:///path',
      violations: [
        `${V0}.url: Invalid value: "https:///path": must be an absolute URL with a scheme and host`,
      ],
    },
    {
      url: 'ftp://hooks.example.com',
      violations: [
        `${V0}.url: Invalid value: "ftp://hooks.example.com": scheme must be http or https`,
      ],
    },
    {
      // The user-info is redacted from the messages (issue 17).
      url: 'http://user:pw@x/#frag',
      violations: [
        `${V0}.url: Invalid value: "http://REDACTED@x/#REDACTED": must not contain user information`,
        `${V0}.url: Invalid value: "http://REDACTED@x/#REDACTED": must not contain a fragment`,
        `${V0}.url: Invalid value: "http://REDACTED@x/#REDACTED": ${https}`,
      ],
    },
    {
      url: 'https://x/a\tb',
      violations: [
        `${V0}.url: Invalid value: "https://x/a\\tb": must not contain control characters`,
      ],
    },
    { url: 'HTTPS://Hooks.Example.com/', violations: [] },
  ]
  for (const { url, insecure, violations, warning } of cases) {
    const tlsConfig = insecure === undefined ? {} : { tlsConfig: { insecureSkipVerify: insecure } }
    const result = validate(config({ validating: [hook({ url, ...tlsConfig })] }))
    t.same(result.violations.map(formatViolation), violations, String(url))
    if (warning) t.match(result.warnings, [warning], `${String(url)} warns`)
    else t.same(result.warnings, [], `${String(url)} does not warn`)
  }
})

// The rules: docs/enforcement.md#mcpwebhookconfig.
t.test('issue 17: a URL is what Go parses, then the MCPWebhookConfig rules apply', async (t) => {
  const valid = 'must be a valid URL'
  const cases: { url: string; insecure?: boolean; violations: string[] }[] = [
    // Go rejects these: url.Parse's reason, with the value quoted as Go's %q.
    {
      url: 'https://host\\x',
      violations: [
        `${V0}.url: Invalid value: "https://host\\\\x": ${valid}: invalid character "\\\\" in host name`,
      ],
    },
    {
      url: 'https://host/%zz',
      violations: [
        `${V0}.url: Invalid value: "https://host/%zz": ${valid}: invalid URL escape "%zz"`,
      ],
    },
    {
      url: 'https://[1.2.3.4]/',
      violations: [`${V0}.url: Invalid value: "https://[1.2.3.4]/": ${valid}: invalid IP-literal`],
    },
    {
      url: 'https://host:80:90/',
      violations: [
        `${V0}.url: Invalid value: "https://host:80:90/": ${valid}: invalid port ":80:90" after host`,
      ],
    },
    {
      url: 'https://ho st/',
      violations: [
        `${V0}.url: Invalid value: "https://ho st/": ${valid}: invalid character " " in host name`,
      ],
    },
    // Go accepts these, and so does the webhook: the operator would not fail on them.
    { url: 'https://256.256.256.256', violations: [] },
    { url: 'https://x/a b', violations: [] },
    { url: 'https://host/?%zz', violations: [] },
    { url: 'https://host:99999/', violations: [] },
    { url: 'https://[fe80::1%25en0]:8443/', violations: [] },
    // Parsed, but not absolute with a host (docs/enforcement.md#mcpwebhookconfig).
    {
      url: ' https://x',
      violations: [
        `${V0}.url: Invalid value: " https://x": must be an absolute URL with a scheme and host`,
      ],
    },
    {
      url: 'https://:8443/',
      violations: [
        `${V0}.url: Invalid value: "https://:8443/": must be an absolute URL with a scheme and host`,
      ],
    },
    // User-info never reaches a message, even when Go's reason would quote a piece of it.
    {
      url: 'http://admin:hunter2@host',
      insecure: true,
      violations: [
        `${V0}.url: Invalid value: "http://REDACTED@host": must not contain user information`,
      ],
    },
    {
      url: 'https://admin:hunter/2@host',
      violations: [
        `${V0}.url: Invalid value: "https://REDACTED@host": must not contain user information`,
      ],
    },
    {
      url: 'https://admin:hun%zzter2@host',
      violations: [
        `${V0}.url: Invalid value: "https://REDACTED@host": must not contain user information`,
      ],
    },
    {
      url: 'http://hooks/v?token=hunter2',
      violations: [
        `${V0}.url: Invalid value: "http://hooks/v?token=REDACTED": must use https unless tlsConfig.insecureSkipVerify is true`,
      ],
    },
  ]
  for (const { url, insecure, violations } of cases) {
    const tlsConfig = insecure === undefined ? {} : { tlsConfig: { insecureSkipVerify: insecure } }
    const result = validate(config({ validating: [hook({ url, ...tlsConfig })] }))
    t.same(result.violations.map(formatViolation), violations, url)
  }
})

t.test("issue 17: a long URL is quoted in part, and so is Go's excerpt of it", async (t) => {
  const url = `https://host:${'9'.repeat(6_000_000)}x/`
  const [message = '', ...rest] = rendered(config({ validating: [hook({ url })] }))
  t.same(rest, [])
  t.ok(message.length < 1_000, `${message.length} characters`)
  t.equal(
    message,
    `${V0}.url: Invalid value: "https://host:${'9'.repeat(243)}"…(5999759 more bytes): must be a valid URL: invalid port ":${'9'.repeat(241)}…(5999772 more bytes)`,
  )
})

t.test('issue 17: a timeout is what Go parses as a duration, then 1s to 30s', async (t) => {
  const between = 'must be between 1s and 30s, or 0 for the 10s default'
  const notDuration = 'must be a duration such as "500ms", "5s" or "1m30s"'
  const cases: { timeout: string; detail?: string }[] = [
    { timeout: '+5s' },
    { timeout: '-0s' },
    { timeout: '30000000μs' }, // U+03BC Greek mu
    { timeout: '30000000µs' }, // U+00B5 micro sign
    { timeout: '5.s' },
    // A negative duration is a duration, out of range as ToolHive reports it.
    { timeout: '-5s', detail: `Invalid value: "-5s": ${between}` },
    {
      timeout: '-9223372036854775808ns',
      detail: `Invalid value: "-9223372036854775808ns": ${between}`,
    },
    // Beyond int64 nanoseconds is no duration to Go.
    {
      timeout: '9223372036854775808ns',
      detail: `Invalid value: "9223372036854775808ns": ${notDuration}`,
    },
    { timeout: '1d', detail: `Invalid value: "1d": ${notDuration}` },
    { timeout: '5 s', detail: `Invalid value: "5 s": ${notDuration}` },
    { timeout: '5s\n', detail: `Invalid value: "5s\\n": ${notDuration}` },
  ]
  for (const { timeout, detail } of cases) {
    const expected = detail === undefined ? [] : [`${V0}.timeout: ${detail}`]
    t.same(rendered(config({ validating: [hook({ timeout })] })), expected, JSON.stringify(timeout))
  }
})

t.test('timeout: a Go duration from 1s to 30s, or 0 for the default', async (t) => {
  const between = 'must be between 1s and 30s, or 0 for the 10s default'
  const cases: { timeout: unknown; detail?: string }[] = [
    { timeout: '0' },
    { timeout: 0 },
    { timeout: '0s' },
    { timeout: '500ms', detail: `Invalid value: "500ms": ${between}` },
    { timeout: '1s' },
    { timeout: '1m30s', detail: `Invalid value: "1m30s": ${between}` },
    { timeout: '30s' },
    { timeout: '29.5s' },
    { timeout: '31s', detail: `Invalid value: "31s": ${between}` },
    { timeout: '1m', detail: `Invalid value: "1m": ${between}` },
    {
      timeout: 'abc',
      detail: 'Invalid value: "abc": must be a duration such as "500ms", "5s" or "1m30s"',
    },
    {
      timeout: '',
      detail: 'Invalid value: "": must be a duration such as "500ms", "5s" or "1m30s"',
    },
    {
      timeout: 5,
      detail: 'Invalid value: 5: must be a duration string such as "5s", not a number',
    },
    { timeout: true, detail: 'Invalid value: "boolean": must be of type string' },
  ]
  for (const { timeout, detail } of cases) {
    const expected = detail === undefined ? [] : [`${V0}.timeout: ${detail}`]
    t.same(rendered(config({ validating: [hook({ timeout })] })), expected, JSON.stringify(timeout))
  }
})

t.test('failurePolicy: fail or ignore, lower-case', async (t) => {
  const unsupported = (value: string) =>
    `${V0}.failurePolicy: Unsupported value: "${value}": supported values: "fail", "ignore"`
  const cases: { policy: unknown; expected: string[] }[] = [
    { policy: 'fail', expected: [] },
    { policy: 'ignore', expected: [] },
    { policy: undefined, expected: [] },
    { policy: 'Fail', expected: [unsupported('Fail')] },
    { policy: '', expected: [unsupported('')] },
    {
      policy: ['fail'],
      expected: [`${V0}.failurePolicy: Invalid value: "array": must be of type string`],
    },
  ]
  for (const { policy, expected } of cases) {
    t.same(
      rendered(config({ validating: [hook({ failurePolicy: policy })] })),
      expected,
      String(policy),
    )
  }
})

t.test('names: required, at most 63 characters, unique before and after sanitising', async (t) => {
  const cases: { name: string; spec: unknown; expected: string[] }[] = [
    {
      name: 'missing name',
      spec: { validating: [{ url: URL_OK }] },
      expected: [`${V0}.name: Required value`],
    },
    {
      name: '64 characters',
      spec: { validating: [hook({ name: 'x'.repeat(64) })] },
      expected: [
        `${V0}.name: Invalid value: "${'x'.repeat(64)}": must be no more than 63 characters`,
      ],
    },
    { name: '63 characters', spec: { validating: [hook({ name: 'x'.repeat(63) })] }, expected: [] },
    {
      name: 'the same name in validating and mutating',
      spec: { validating: [hook({ name: 'a' })], mutating: [hook({ name: 'a' })] },
      expected: [
        'spec.mutating[0].name: Duplicate value: "a": also used by spec.validating[0].name',
      ],
    },
    {
      name: 'the same name twice in one list',
      spec: { validating: [hook({ name: 'a' }), hook({ name: 'b' }), hook({ name: 'a' })] },
      expected: [
        'spec.validating[2].name: Duplicate value: "a": also used by spec.validating[0].name',
      ],
    },
    {
      name: 'names equal only after sanitising',
      spec: { validating: [hook({ name: 'a_b' })], mutating: [hook({ name: 'a-b' })] },
      expected: [
        'spec.mutating[0].name: Duplicate value: "a-b": collides with "a_b" (spec.validating[0].name) after sanitising to A_B',
      ],
    },
    {
      name: 'case and punctuation clash',
      spec: { validating: [hook({ name: 'Audit.Log' }), hook({ name: 'audit log' })] },
      expected: [
        'spec.validating[1].name: Duplicate value: "audit log": collides with "Audit.Log" (spec.validating[0].name) after sanitising to AUDIT_LOG',
      ],
    },
  ]
  for (const { name, spec, expected } of cases) t.same(rendered(config(spec)), expected, name)
})

t.test("values are quoted as apimachinery quotes them, with Go's %q", async (t) => {
  t.same(rendered(config({ validating: [hook({ name: 'a\u0001' }), hook({ name: 'a\u0001' })] })), [
    'spec.validating[1].name: Duplicate value: "a\\x01": also used by spec.validating[0].name',
  ])
  t.same(rendered(config({ validating: [hook({ failurePolicy: 'fail\u2028' })] })), [
    `${V0}.failurePolicy: Unsupported value: "fail\\u2028": supported values: "fail", "ignore"`,
  ])
  t.same(rendered(config({ validating: [hook({ name: 'a\u00a0b' }), hook({ name: 'a b' })] })), [
    'spec.validating[1].name: Duplicate value: "a b": collides with "a\\u00a0b" (spec.validating[0].name) after sanitising to A_B',
  ])
})

t.test('sanitiseWebhookName', async (t) => {
  const cases: [string, string][] = [
    ['audit', 'AUDIT'],
    ['a-b', 'A_B'],
    ['a.b c', 'A_B_C'],
    ['Already_OK_9', 'ALREADY_OK_9'],
    // One character out per character in, as Go's per-rune unicode.ToUpper gives.
    ['straße', 'STRA_E'],
    ['ﬁle', '_LE'],
    ['ıd', 'ID'],
    ['🙂', '_'],
  ]
  for (const [name, expected] of cases) t.equal(sanitiseWebhookName(name), expected, name)
})

t.test('secret references', async (t) => {
  const tls = (tlsConfig: unknown) => config({ validating: [hook({ tlsConfig })] })
  const dns =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
  const cases: { name: string; object: KubeObject; expected: string[] }[] = [
    {
      name: 'client cert without its key',
      object: tls({ clientCertSecretRef: { name: 'c', key: 'tls.crt' } }),
      expected: [
        `${V0}.tlsConfig.clientKeySecretRef: Required value: required when clientCertSecretRef is set`,
      ],
    },
    {
      name: 'client key without its cert',
      object: tls({ clientKeySecretRef: { name: 'c', key: 'tls.key' } }),
      expected: [
        `${V0}.tlsConfig.clientCertSecretRef: Required value: required when clientKeySecretRef is set`,
      ],
    },
    {
      name: 'invalid Secret name and key',
      object: tls({ caSecretRef: { name: 'My_Secret', key: 'ca crt' } }),
      expected: [
        `${V0}.tlsConfig.caSecretRef.name: Invalid value: "My_Secret": ${dns}`,
        `${V0}.tlsConfig.caSecretRef.key: Invalid value: "ca crt": a valid secret key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name', or 'KEY_NAME', or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
      ],
    },
    {
      name: 'Secret name too long',
      object: config({
        validating: [hook({ hmacSecretRef: { name: 'a'.repeat(254), key: 'k' } })],
      }),
      expected: [
        `${V0}.hmacSecretRef.name: Invalid value: "${'a'.repeat(254)}": must be no more than 253 characters`,
      ],
    },
    {
      name: 'empty ref',
      object: config({ validating: [hook({ hmacSecretRef: {} })] }),
      expected: [
        `${V0}.hmacSecretRef.name: Required value`,
        `${V0}.hmacSecretRef.key: Required value`,
      ],
    },
    {
      name: 'ref of the wrong type',
      object: tls({ caSecretRef: 'ca', insecureSkipVerify: 'yes' }),
      expected: [
        `${V0}.tlsConfig.caSecretRef: Invalid value: "string": must be of type object`,
        `${V0}.tlsConfig.insecureSkipVerify: Invalid value: "string": must be of type boolean`,
      ],
    },
  ]
  for (const { name, object, expected } of cases) t.same(rendered(object), expected, name)
})

t.test('every violation is reported at once, in document order', async (t) => {
  const object = config({
    validating: [
      { name: 'a-b', url: 'http://x', timeout: '31s', failurePolicy: 'Fail' },
      'not a webhook',
    ],
    mutating: [
      {
        name: 'a_b',
        url: 'not-a-valid-url',
        tlsConfig: { clientCertSecretRef: { name: 'c', key: 'k' } },
      },
    ],
  })
  t.equal(
    formatViolations(validate(object).violations),
    '[' +
      [
        'spec.validating[0].url: Invalid value: "http://x": must use https unless tlsConfig.insecureSkipVerify is true',
        'spec.validating[0].timeout: Invalid value: "31s": must be between 1s and 30s, or 0 for the 10s default',
        'spec.validating[0].failurePolicy: Unsupported value: "Fail": supported values: "fail", "ignore"',
        'spec.validating[1]: Invalid value: "string": must be of type object',
        'spec.mutating[0].name: Duplicate value: "a_b": collides with "a-b" (spec.validating[0].name) after sanitising to A_B',
        'spec.mutating[0].url: Invalid value: "not-a-valid-url": must be an absolute URL with a scheme and host',
        'spec.mutating[0].tlsConfig.clientKeySecretRef: Required value: required when clientCertSecretRef is set',
      ].join(', ') +
      ']',
  )
})

t.test('hostile input never throws and reports wrong types as violations', async (t) => {
  const cases: { name: string; object: unknown; expected: string[] }[] = [
    {
      name: 'spec is an array',
      object: config([]),
      expected: ['spec: Invalid value: "array": must be of type object'],
    },
    {
      name: 'spec is a number',
      object: config(7),
      expected: ['spec: Invalid value: "integer": must be of type object'],
    },
    {
      name: 'lists are not arrays',
      object: config({ validating: {}, mutating: 'x' }),
      expected: [
        'spec.validating: Invalid value: "object": must be of type array',
        'spec.mutating: Invalid value: "string": must be of type array',
      ],
    },
    {
      name: 'webhooks are null and numbers',
      object: config({ validating: [null, 3] }),
      expected: [
        'spec.validating[0]: Invalid value: "null": must be of type object',
        'spec.validating[1]: Invalid value: "integer": must be of type object',
      ],
    },
    {
      name: '__proto__ keys are ordinary keys',
      object: JSON.parse(
        '{"kind":"MCPWebhookConfig","spec":{"__proto__":{"validating":[1]},"validating":[{"__proto__":{"name":"x"},"url":"https://x"}]}}',
      ),
      expected: ['spec.validating[0].name: Required value'],
    },
    {
      name: 'the object is an array',
      object: [],
      expected: [`spec: Required value: ${AT_LEAST_ONE_WEBHOOK}`],
    },
    {
      name: 'the object is a string',
      object: 'x',
      expected: [`spec: Required value: ${AT_LEAST_ONE_WEBHOOK}`],
    },
  ]
  for (const { name, object, expected } of cases) {
    t.same(rendered(object as KubeObject), expected, name)
  }
})

t.test('only CREATE and UPDATE are validated', async (t) => {
  for (const operation of ['DELETE', 'CONNECT'] as const) {
    t.same(validate(config({}), operation), { violations: [], warnings: [] }, operation)
  }
  t.equal(validate(config({}), 'UPDATE').violations.length, 1)
})

t.test('every warning fits in 120 characters', async (t) => {
  const longName = 'w'.repeat(60)
  const many = Array.from({ length: 1000 }, (_, i) =>
    hook({
      name: `${longName}${i}`,
      url: `http://${'h'.repeat(200)}.example.com/`,
      tlsConfig: { insecureSkipVerify: true },
    }),
  )
  const { warnings, violations } = validate(config({ validating: many }))
  t.same(violations, [])
  t.equal(warnings.length, 1000)
  t.ok(renderWarnings(warnings).every((w) => w.length <= MESSAGE_LIMITS.warningChars))
})
