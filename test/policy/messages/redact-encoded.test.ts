/**
 * A credential percent-encoded inside a URL, at any depth and wherever it sits (a query value, a
 * query name with its `=` encoded, a path segment), is redacted in every echo of the URL: the
 * value as quoted in a denial, free text, a warning, a log field. An encoded value that hides no
 * secret is kept as written.
 */

import fc from 'fast-check'
import t from 'tap'
import { redactText, redactValue } from '../../../src/policy/messages/redact.ts'
import {
  quoteValue,
  renderLogFields,
  renderText,
  renderWarnings,
} from '../../../src/policy/messages/render.ts'

const SEED = 50

/** Every echo of `url` that leaves the process, as one string. */
function echoes(url: string): string {
  return [
    redactValue(url),
    redactText(`cannot reach "${url}": refused`),
    quoteValue(url),
    renderText(`webhook ${url} failed`),
    ...renderWarnings([url]),
    JSON.stringify(renderLogFields({ url, msg: `calling ${url}` })),
  ].join('\n')
}

/** `text` with the characters `pick` chooses written as `%XX` (upper- or lower-case hex). */
function encode(text: string, pick: (c: string) => boolean, lower: boolean): string {
  return text.replace(/[\s\S]/gu, (c) => {
    if (!pick(c)) return c
    const hex = Buffer.from(c)
      .toString('hex')
      .replace(/../g, (byte) => `%${byte}`)
    return lower ? hex : hex.toUpperCase()
  })
}

const everyReserved = (c: string) => !/[A-Za-z0-9_.~-]/.test(c)
const equalsOnly = (c: string) => c === '=' || c === '%'
const punctuation = (c: string) => /[:/@?=&#%]/.test(c)

t.test('the brief’s cases and their kin', async (t) => {
  const cases = [
    'https://h/x?next=https%3A%2F%2Fuser%3AZsecret9%40idp%2F',
    'https://h/x?redirect=https%253A%252F%252Fu%253AZsecret9%2540h',
    'https://h/x?token%3DZsecret9',
    'https://h/x?a=1&access_token%3DZsecret9&b=2',
    'https://h/x?next%3Dhttps%3A%2F%2Fu%3AZsecret9%40h',
    'https://h/r/https%3A%2F%2Fu%3AZsecret9%40h/p',
    // Five times encoded: past the three decodings a parameter value was given.
    `https://h/x?r=${[1, 2, 3, 4, 5].reduce((url) => encodeURIComponent(url), 'https://u:Zsecret9@h')}`,
  ]
  for (const url of cases) t.notMatch(echoes(url), /Zsecret9/, url)
  t.equal(redactValue('https://h/x?a=1&token%3DZsecret9&b=2'), 'https://h/x?a=1&REDACTED&b=2')
  t.equal(redactValue('https://h/r/https%3A%2F%2Fu%3Ap%40h/p'), 'https://h/r/REDACTED/p')
})

t.test('a credential encoded any number of times, anywhere in a URL, is never echoed', (t) => {
  const secret = fc.stringMatching(/^[A-Za-z0-9]{6,12}$/).map((s) => `Zq${s}`)
  const carrier = fc.constantFrom(
    (s: string) => `https://user:${s}@idp.example/cb`,
    (s: string) => `user:${s}@redis:6379`,
    (s: string) => `https://h/cb?access_token=${s}`,
    (s: string) => `token=${s}`,
    (s: string) => `client_secret=${s}&x=1`,
    (s: string) => `https://h/cb#${s}`,
  )
  const placement = fc.constantFrom(
    (e: string) => `https://h/x?next=${e}`,
    (e: string) => `https://h/x?${e}`,
    (e: string) => `https://h/x?a=1&${e}&b=2`,
    (e: string) => `https://h/r/${e}/p`,
    (e: string) => `//h/${e}`,
  )
  const pick = fc.constantFrom(everyReserved, equalsOnly, punctuation)
  fc.assert(
    fc.property(
      secret,
      carrier,
      placement,
      pick,
      fc.integer({ min: 1, max: 10 }),
      fc.boolean(),
      (s, carry, place, chosen, times, lower) => {
        let encoded = carry(s)
        for (let i = 0; i < times; i++) encoded = encode(encoded, chosen, lower)
        return !echoes(place(encoded)).includes(s)
      },
    ),
    { seed: SEED, numRuns: 400 },
  )
  t.end()
})

t.test('an encoded value that hides no secret is kept as written', (t) => {
  const plain = fc.stringMatching(/^[A-Za-z0-9 ._~,+!-]{0,30}$/)
  fc.assert(
    fc.property(plain, fc.integer({ min: 1, max: 3 }), (text, times) => {
      let encoded = text
      for (let i = 0; i < times; i++) encoded = encodeURIComponent(encoded)
      const url = `https://h/search?q=${encoded}&page=2`
      return redactValue(url) === url
    }),
    { seed: SEED, numRuns: 200 },
  )
  t.end()
})
