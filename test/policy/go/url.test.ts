import t from 'tap'
import {
  goHostname,
  parseGoRequestUri,
  parseGoUrl,
  parseGoUrlBytes,
} from '../../../src/policy/go/url.ts'
import type { GoUrlResult } from '../../../src/policy/go/url.ts'
import { GO_URL_CASES, SAME } from './url-cases.ts'
import type { GoVerdict } from './url-cases.ts'

/** A result in the shape of the table: the error, or the non-empty fields. */
function verdict(result: GoUrlResult): GoVerdict {
  if (!result.ok) return { error: result.error }
  const { user, ...url } = result.url
  const fields: Record<string, string> = {}
  for (const [key, value] of Object.entries(url)) if (value !== '') fields[key] = value
  if (user !== undefined) {
    fields['username'] = user.username
    if (user.password !== undefined) fields['password'] = user.password
  }
  return fields
}

t.test("url.Parse and url.ParseRequestURI agree with Go 1.26.8 on Go's own cases", async (t) => {
  t.ok(GO_URL_CASES.length > 150)
  for (const [source, input, parse, request] of GO_URL_CASES) {
    const name = `${source}: ${JSON.stringify(input)}`
    t.same(verdict(parseGoUrl(input)), parse, `Parse ${name}`)
    t.same(verdict(parseGoRequestUri(input)), request === SAME ? parse : request, `Request ${name}`)
  }
})

t.test('issue 17: what Go rejects and accepts', async (t) => {
  t.same(verdict(parseGoUrl('https://host\\x')), {
    error: 'invalid character "\\\\" in host name',
  })
  t.same(verdict(parseGoUrl('https://host/%zz')), { error: 'invalid URL escape "%zz"' })
  t.same(verdict(parseGoUrl('https://256.256.256.256')), {
    scheme: 'https',
    host: '256.256.256.256',
  })
})

t.test('escapes are checked on the UTF-8 bytes, as Go quotes them', async (t) => {
  // `%é` is `%` and two bytes of é; `%a` then é cuts é in half.
  t.same(verdict(parseGoUrl('https://x/%é')), { error: 'invalid URL escape "%é"' })
  t.same(verdict(parseGoUrl('https://x/%aé')), { error: 'invalid URL escape "%a\\xc3"' })
  t.same(verdict(parseGoUrl('https://[%c3%a9::1]/')), {
    error:
      'invalid host: ParseAddr("é::1"): each colon-separated field must have at least one digit (at "é::1")',
  })
})

t.test("an error names the URL Go's url.Error quotes", async (t) => {
  // url.Parse quotes the text before the first `#`, unless the fragment is at fault.
  const cases: [string, string, string][] = [
    ['https://x%zz/#ok', 'https://x%zz/', 'invalid URL escape "%zz"'],
    ['https://x/#%zz#', 'https://x/#%zz#', 'invalid URL escape "%zz"'],
    ['https://x%zz/', 'https://x%zz/', 'invalid URL escape "%zz"'],
  ]
  for (const [input, named, error] of cases) {
    t.same(parseGoUrl(input), { ok: false, error, input: named }, input)
  }
  // url.ParseRequestURI does not cut at `#`.
  t.same(parseGoRequestUri('https://x%zz/#ok'), {
    ok: false,
    error: 'invalid URL escape "%zz"',
    input: 'https://x%zz/#ok',
  })
})

t.test('parseGoUrlBytes leaves the fields as UTF-8 bytes', async (t) => {
  // An escaped byte that is not UTF-8 survives; the text form reads it as U+FFFD.
  const bytes = parseGoUrlBytes('https://x%ff.caf%C3%A9/é#é')
  t.match(bytes, {
    ok: true,
    url: { host: 'x\xff.caf\xc3\xa9', path: '/\xc3\xa9', fragment: '\xc3\xa9' },
  })
  t.match(parseGoUrl('https://x%ff.caf%C3%A9/é#é'), {
    ok: true,
    url: { host: 'x\ufffd.café', path: '/é', fragment: 'é' },
  })
})

t.test('Hostname strips the port and the brackets', async (t) => {
  const cases: [string, string][] = [
    ['host', 'host'],
    ['host:8443', 'host'],
    ['host:', 'host'],
    [':8443', ''],
    ['[::1]:8443', '::1'],
    ['[::1]', '::1'],
    ['host:x', 'host:x'],
  ]
  for (const [host, name] of cases) t.equal(goHostname(host), name, host)
})

// No clock here (a timed assertion fails on a loaded machine): a parser quadratic in 6 MB would not
// finish within the test's timeout (.taprc), which fails it.
t.test('a megabyte-long URL parses, not for ever', async (t) => {
  const long = `https://host/${'a'.repeat(6_000_000)}`
  t.ok(parseGoUrl(long).ok)
  t.notOk(parseGoUrl(`https://host:${'9'.repeat(6_000_000)}x/`).ok, 'an invalid port')
})
