import t from 'tap'
import {
  hasUserInfo,
  redactSecretParameters,
  redactSecrets,
  redactUserInfo,
} from '../../src/policy/redact.ts'
import { MAX_QUOTED_CHARS, clipText, quoteValue } from '../../src/policy/quoted-value.ts'

t.test('URL user-info is redacted whole', async (t) => {
  const cases: [string, string][] = [
    ['http://admin:hunter2@host', 'http://REDACTED@host'],
    ['https://ghp_token@github.com/org/repo', 'https://REDACTED@github.com/org/repo'],
    ['https://@host/', 'https://REDACTED@host/'],
    // Go takes the last `@` of the authority as the end of the user-info.
    ['http://a@b:c@host:8443/p', 'http://REDACTED@host:8443/p'],
    // A password with `/`, `?` or `#` ends Go's authority early: `admin:pa` is no host:port.
    ['http://admin:pa/ss@host/p', 'http://REDACTED@host/p'],
    ['http://admin:pa?ss@host', 'http://REDACTED@host'],
    ['http://admin:pa#ss@host', 'http://REDACTED@host'],
    // Each URL of a text, up to whitespace.
    ['a=http://u:p@x b=https://v:q@y', 'a=http://REDACTED@x b=https://REDACTED@y'],
    ['http://u:p@x://v:q@y', 'http://REDACTED@x://REDACTED@y'],
    ['ftp://user:secret@files.example.com', 'ftp://REDACTED@files.example.com'],
  ]
  for (const [text, redacted] of cases) t.equal(redactUserInfo(text), redacted, text)
})

t.test('an @ that is not user-info is kept', async (t) => {
  const kept = [
    'https://host/@me',
    'https://host:8443/users/@me',
    'https://[::1]:8443/@x',
    'https://host/?mail=a@b',
    'https://host#x@y',
    'mailto:someone@example.com',
    'user@example.com',
    'https://host',
  ]
  for (const text of kept) {
    t.equal(redactUserInfo(text), text, text)
    t.notOk(hasUserInfo(text), text)
  }
})

t.test('secret-named query parameters are redacted', async (t) => {
  const cases: [string, string][] = [
    ['https://h/hook?token=abc', 'https://h/hook?token=REDACTED'],
    ['https://h/?a=1&access_token=abc&b=2', 'https://h/?a=1&access_token=REDACTED&b=2'],
    ['https://h/?client_secret=s#frag', 'https://h/?client_secret=REDACTED#frag'],
    ['https://h/?api-key=k;password=p', 'https://h/?api-key=REDACTED;password=REDACTED'],
    [
      'https://s3/?X-Amz-Signature=f00&X-Amz-Date=1',
      'https://s3/?X-Amz-Signature=REDACTED&X-Amz-Date=1',
    ],
    ['https://h/?token=', 'https://h/?token='],
    ['https://h/?page=2&sort=name', 'https://h/?page=2&sort=name'],
    ['https://h/?tokens', 'https://h/?tokens'],
  ]
  for (const [text, redacted] of cases) t.equal(redactSecretParameters(text), redacted, text)
  t.equal(
    redactSecrets('http://admin:hunter2@host/?token=t0k3n'),
    'http://REDACTED@host/?token=REDACTED',
  )
})

t.test('redaction takes linear time on hostile values', async (t) => {
  const started = performance.now()
  redactSecrets('a://u:p/'.repeat(500_000) + '@')
  redactSecrets(`?${'a'.repeat(3_000_000)}`)
  redactSecrets('?&;='.repeat(1_000_000))
  redactSecrets(`http://${':'.repeat(3_000_000)}@`)
  t.ok(performance.now() - started < 3_000)
})

t.test('quoted values: redacted, %q, and at most 256 characters', async (t) => {
  t.equal(quoteValue('http://admin:hunter2@host'), '"http://REDACTED@host"')
  t.equal(quoteValue('tab\there'), '"tab\\there"')
  t.equal(quoteValue('x'.repeat(MAX_QUOTED_CHARS)), `"${'x'.repeat(MAX_QUOTED_CHARS)}"`)
  t.equal(
    quoteValue('x'.repeat(6_000_000)),
    `"${'x'.repeat(MAX_QUOTED_CHARS)}"…(${6_000_000 - MAX_QUOTED_CHARS} more bytes)`,
  )
  // Escapes count in full and are never split; what is left is counted in UTF-8 bytes.
  t.equal(quoteValue(`${'x'.repeat(254)}\n\né`), `"${'x'.repeat(254)}\\n"…(3 more bytes)`)
  t.equal(
    quoteValue(`http://admin:hunter2@${'h'.repeat(1000)}`),
    `"http://REDACTED@${'h'.repeat(MAX_QUOTED_CHARS - 16)}"…(${1000 - MAX_QUOTED_CHARS + 16} more bytes)`,
    'redacted before it is cut, so a cut cannot expose a password',
  )
  t.equal(clipText('{"a":"b"}', 5), '{"a":…(4 more bytes)')
  t.equal(clipText('{"a":"b"}', 9), '{"a":"b"}')
})
