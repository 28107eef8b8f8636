/**
 * A port of Go's netip.ParseAddr (Go 1.26), which net/url applies to a bracketed host
 * (`https://[fe80::1%25en0]:8443`). Runs on a byte string (bytes.ts); errors carry Go's
 * wording. Only what url.Parse needs is returned: whether the address is IPv4.
 */

import { goQuoteBytes } from './quote.ts'

type GoAddrResult =
  { readonly ok: true; readonly is4: boolean } | { readonly ok: false; readonly error: string }

/** netip.ParseAddr over a byte string. */
export function parseGoAddr(input: string): GoAddrResult {
  for (let i = 0; i < input.length; i++) {
    switch (input[i]) {
      case '.':
        return result(parseIPv4Fields(input, 0, input.length), true)
      case ':':
        return result(parseIPv6(input), false)
      case '%':
        // Assume an IPv6 address with a zone, but with the address missing (as Go does).
        return { ok: false, error: addrError(input, 'missing IPv6 address') }
    }
  }
  return { ok: false, error: addrError(input, 'unable to parse IP') }
}

function result(error: string | undefined, is4: boolean): GoAddrResult {
  return error === undefined ? { ok: true, is4 } : { ok: false, error }
}

function addrError(input: string, message: string, at = ''): string {
  const base = `ParseAddr(${goQuoteBytes(input)}): ${message}`
  return at === '' ? base : `${base} (at ${goQuoteBytes(at)})`
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57
}

/** parseIPv4Fields over input[start:end]: undefined when it holds four decimal octets. */
function parseIPv4Fields(input: string, start: number, end: number): string | undefined {
  const s = input.slice(start, end)
  let value = 0
  let position = 0
  let digits = 0
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i)
    if (isDigit(code)) {
      if (digits === 1 && value === 0) {
        return addrError(input, 'IPv4 field has octet with leading zero')
      }
      value = value * 10 + code - 48
      digits++
      if (value > 255) return addrError(input, 'IPv4 field has value >255')
    } else if (code === 0x2e) {
      // .1.2.3, 1.2.3. and 1..2.3
      if (i === 0 || i === s.length - 1 || s[i - 1] === '.') {
        return addrError(input, 'IPv4 field must have at least one digit', s.slice(i))
      }
      if (position === 3) return addrError(input, 'IPv4 address too long')
      position++
      value = 0
      digits = 0
    } else {
      return addrError(input, 'unexpected character', s.slice(i))
    }
  }
  return position < 3 ? addrError(input, 'IPv4 address too short') : undefined
}

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48
  if (code >= 97 && code <= 102) return code - 87
  if (code >= 65 && code <= 70) return code - 55
  return -1
}

/** parseIPv6: undefined when `input` is an IPv6 address with an optional non-empty zone. */
function parseIPv6(input: string): string | undefined {
  let s = input
  let zone = ''
  const percent = s.indexOf('%')
  if (percent !== -1) {
    zone = s.slice(percent + 1)
    s = s.slice(0, percent)
    if (zone === '') return addrError(input, 'zone must be a non-empty string')
  }
  let ellipsis = -1
  if (s.startsWith('::')) {
    ellipsis = 0
    s = s.slice(2)
    if (s === '') return undefined
  }
  let i = 0
  while (i < 16) {
    let offset = 0
    let accumulator = 0
    for (; offset < s.length; offset++) {
      const digit = hexValue(s.charCodeAt(offset))
      if (digit < 0) break
      accumulator = accumulator * 16 + digit
      if (offset > 3) {
        return addrError(input, 'each group must have 4 or less digits', s)
      }
      if (accumulator > 0xffff) return addrError(input, 'IPv6 field has value >=2^16', s)
    }
    if (offset === 0) {
      return addrError(input, 'each colon-separated field must have at least one digit', s)
    }
    if (offset < s.length && s[offset] === '.') {
      if (ellipsis < 0 && i !== 12) {
        return addrError(
          input,
          'embedded IPv4 address must replace the final 2 fields of the address',
          s,
        )
      }
      if (i + 4 > 16) {
        return addrError(
          input,
          'too many hex fields to fit an embedded IPv4 at the end of the address',
          s,
        )
      }
      const end = zone.length > 0 ? input.length - zone.length - 1 : input.length
      const error = parseIPv4Fields(input, end - s.length, end)
      if (error !== undefined) return error
      s = ''
      i += 4
      break
    }
    i += 2
    s = s.slice(offset)
    if (s === '') break
    if (s[0] !== ':') return addrError(input, 'unexpected character, want colon', s)
    if (s.length === 1) return addrError(input, 'colon must be followed by more characters', s)
    s = s.slice(1)
    if (s[0] === ':') {
      if (ellipsis >= 0) return addrError(input, 'multiple :: in address', s)
      ellipsis = i
      s = s.slice(1)
      if (s === '') break
    }
  }
  if (s !== '') return addrError(input, 'trailing garbage after address', s)
  if (i < 16 && ellipsis < 0) return addrError(input, 'address string too short')
  if (i === 16 && ellipsis >= 0) {
    return addrError(input, 'the :: must expand to at least one field of zeros')
  }
  return undefined
}
