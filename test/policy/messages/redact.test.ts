import t from 'tap'
import {
  hasUserInfo,
  isSecretName,
  redactText,
  redactValue,
} from '../../../src/policy/messages/redact.ts'
import { quoteValue } from '../../../src/policy/messages/render.ts'

/** [value as written, value redacted]: hostile and ordinary values, each read as one value. */
const VALUES: [string, string][] = [
  // Percent-encoding hides nothing: a URL carried in a parameter, a secret's encoded name, a
  // value encoded twice; an ordinary encoded value stays.
  [
    'https://h/cb?next=https%3A%2F%2Fadmin%3Ahunter2%40evil.example%2F&x=1',
    'https://h/cb?next=REDACTED&x=1',
  ],
  ['https://h/x?acc%65ss_token=hunter2&a=b', 'https://h/x?acc%65ss_token=REDACTED&a=b'],
  ['https://h/x?api%2Dkey=hunter2', 'https://h/x?api%2Dkey=REDACTED'],
  ['https://h/x?r=https%253A%252F%252Fu%253Ap%2540h', 'https://h/x?r=REDACTED'],
  ['https://h/x?r=%2Fcb%3Faccess_token%3Dhunter2', 'https://h/x?r=REDACTED'],
  ['https://h/x?page=2&q=%41bc%20def', 'https://h/x?page=2&q=%41bc%20def'],
  // User-info, whole, whatever the URL looks like.
  ['http://admin:hunter2@host', 'http://REDACTED@host'],
  ['https://ghp_token@github.com/org/repo', 'https://REDACTED@github.com/org/repo'],
  ['https://@host/', 'https://REDACTED@host/'],
  // Go takes the last `@` of the authority as the end of the user-info.
  ['http://a@b:c@host:8443/p', 'http://REDACTED@host:8443/p'],
  // A password with `/`, `?` or `#` ends Go's authority early: `admin:pa` is no host:port.
  ['http://admin:pa/ss@host/p', 'http://REDACTED@host/p'],
  ['http://admin:pa?ss@host', 'http://REDACTED@host'],
  ['http://admin:pa#ss@host', 'http://REDACTED@host'],
  ['a=http://u:p@x b=https://v:q@y', 'a=http://REDACTED@x b=https://REDACTED@y'],
  ['http://u:p@x://v:q@y', 'http://REDACTED@x://REDACTED@y'],
  ['ftp://user:secret@files.example.com', 'ftp://REDACTED@files.example.com'],
  // URLs that do not parse: no scheme, odd slashes, spaces, backslashes.
  ['//user:pw@h/p', '//REDACTED@h/p'],
  ['https:/user:pw@h', 'https:/REDACTED@h'],
  ['https:///user:pw@h', 'https:///REDACTED@h'],
  ['https://us er:pw@h', 'https://REDACTED@h'],
  ['https://tok en@h', 'https://REDACTED@h'],
  ['https:\\\\user:pw@h', 'https:\\\\REDACTED@h'],
  ['https://u"x:pw@h', 'https://REDACTED@h'],
  ['https://user:pw\n@h', 'https://REDACTED@h'],
  // No slashes at all: `user:password@host` (a Redis address) and `scheme:user:pw@host`.
  ['default:hunter2@redis:6379', 'REDACTED@redis:6379'],
  ['https:user:pw@h', 'REDACTED@h'],
  ['mailto:someone@example.com', 'REDACTED@example.com'],
  // Fragments of URL-ish values, whole.
  ['https://h/cb#access_token=abc&x=1', 'https://h/cb#REDACTED'],
  ['https://h#frag', 'https://h#REDACTED'],
  ['https://h/#a b c', 'https://h/#REDACTED'],
  ['https://h#x@y', 'https://h#REDACTED'],
  ['host.example#frag', 'host.example#REDACTED'],
  // Secret-named parameters, anywhere in the value.
  ['https://h/hook?token=abc', 'https://h/hook?token=REDACTED'],
  ['https://h/?a=1&access_token=abc&b=2', 'https://h/?a=1&access_token=REDACTED&b=2'],
  ['https://h/?client_secret=s#frag', 'https://h/?client_secret=REDACTED#REDACTED'],
  ['https://h/?api-key=k;password=p', 'https://h/?api-key=REDACTED;password=REDACTED'],
  [
    'https://s3/?X-Amz-Signature=f00&X-Amz-Date=1',
    'https://s3/?X-Amz-Signature=REDACTED&X-Amz-Date=1',
  ],
  ['https://h/?token=a?b c', 'https://h/?token=REDACTED'],
  ['https://h/?token="quoted"', 'https://h/?token=REDACTED'],
  ['password=hunter2', 'password=REDACTED'],
  ['see sig=abc', 'see sig=REDACTED'],
  ['https://admin:pw@h/?token=t#f', 'https://REDACTED@h/?token=REDACTED#REDACTED'],
]

/** Values with an `@`, `#` or `=` that hold no secret, kept as written. */
const KEPT = [
  'https://host/@me',
  'https://host:8443/users/@me',
  'https://[::1]:8443/@x',
  'https://host/?mail=a@b',
  'user@example.com',
  'https://host',
  'https://host/#',
  'https://h/?token=',
  'https://h/?page=2&sort=name',
  'https://h/?tokens',
  'issue #26',
  'C# and F#',
  'ghcr.io/stacklok/toolhive:v0.6@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
  'replicas=3',
]

t.test('values: user-info, fragments and secret parameters are redacted', async (t) => {
  for (const [value, redacted] of VALUES) {
    t.equal(redactValue(value), redacted, JSON.stringify(value))
    t.equal(redactValue(redacted), redacted, `${JSON.stringify(value)}: idempotent`)
  }
  for (const value of KEPT) t.equal(redactValue(value), value, `${JSON.stringify(value)}: kept`)
})

t.test('text: a quoted value keeps its quotes, and text redaction leaves it alone', async (t) => {
  for (const [value] of VALUES) {
    const quoted = quoteValue(value)
    const message = `spec.url: Invalid value: ${quoted}: bad`
    t.equal(redactText(message), message, `${JSON.stringify(value)}: unchanged in text`)
    t.match(message, /^spec\.url: Invalid value: ".*": bad$/, `${JSON.stringify(value)}: quoted`)
  }
  const cases: [string, string][] = [
    // The closing quote survives a redaction that ends the value.
    [
      'Invalid value: "https://h/?token=abc": bad',
      'Invalid value: "https://h/?token=REDACTED": bad',
    ],
    ['Invalid value: "https://h/#frag": bad', 'Invalid value: "https://h/#REDACTED": bad'],
    ['get "https://u:p@h": refused', 'get "https://REDACTED@h": refused'],
    [
      'parse "https://us er:pw@h": net/url: invalid userinfo',
      'parse "https://REDACTED@h": net/url: invalid userinfo',
    ],
    // JSON: escaped quotes belong to the value, the closing one ends it.
    ['{"url":"https://h/?token=a\\"b","n":1}', '{"url":"https://h/?token=REDACTED","n":1}'],
    ['{"url":"https://h#x"}', '{"url":"https://h#REDACTED"}'],
    // Words end at whitespace in text.
    ['GET https://h/?token=abc failed', 'GET https://h/?token=REDACTED failed'],
    ['token=abc and more', 'token=REDACTED and more'],
    ['see https://h#x now', 'see https://h#REDACTED now'],
    ['redis default:pw@redis:6379 down', 'redis REDACTED@redis:6379 down'],
    ['line\nhttps://u:p@h', 'line\nhttps://REDACTED@h'],
  ]
  for (const [text, redacted] of cases) {
    t.equal(redactText(text), redacted, JSON.stringify(text))
    t.equal(redactText(redacted), redacted, `${JSON.stringify(text)}: idempotent`)
  }
  for (const value of KEPT) t.equal(redactText(value), value, `${JSON.stringify(value)}: kept`)
})

t.test('hasUserInfo and isSecretName', async (t) => {
  t.ok(hasUserInfo('https://u:p@h'))
  t.ok(hasUserInfo('//u@h'))
  t.notOk(hasUserInfo('https://h/@me'))
  t.notOk(hasUserInfo('https://h'))
  for (const name of ['token', 'access_token', 'X-Api-Key', 'client_secret', 'Signature', 'pass'])
    t.ok(isSecretName(name), name)
  for (const name of ['', 'page', 'tokens', 'keys', 'sort', '-_-'])
    t.notOk(isSecretName(name), name)
})

t.test('redaction takes linear time on hostile values', async (t) => {
  // About a million characters each: linear passes take a fraction of a second, and a quadratic
  // one (some 10^11 steps or more) would run for minutes; the test's own timeout is the bound.
  const times = (unit: string) => unit.repeat(Math.ceil(1_000_000 / unit.length))
  const hostile = [
    times('a://u:p/') + '@',
    `?${times('a')}`,
    times('?&;='),
    `http://${times(':')}@`,
    times('a:') + '@',
    times('@:'),
    times('a#'),
    times('//a'),
    times('\\"') + '@',
    times(' token='),
    `?a=${times('%25')}`,
    times('&a=%41'),
  ]
  for (const value of hostile) {
    t.type(redactValue(value), 'string')
    t.type(redactText(value), 'string')
  }
})
