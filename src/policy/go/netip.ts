/**
 * A port of Go's netip.ParseAddr (Go 1.26), which net/url applies to a bracketed host
 * (`https://[fe80::1%25en0]:8443`) and net.ParseIP to any text (remote-url.ts). Runs on a byte
 * string (bytes.ts); errors carry Go's wording.
 */

import { goQuoteBytes } from './quote.ts'

export interface GoAddr {
  /** An IPv4 address (`1.2.3.4`); an IPv4-mapped IPv6 one (`::ffff:1.2.3.4`) is not. */
  readonly is4: boolean
  /** Addr.As16(): the 16 bytes, an IPv4 address in its IPv4-mapped form. */
  readonly bytes: readonly number[]
  /** Addr.Zone(): what follows `%` in an IPv6 address, else empty. */
  readonly zone: string
}

type GoAddrResult =
  ({ readonly ok: true } & GoAddr) | { readonly ok: false; readonly error: string }

/** netip.ParseAddr over a byte string. */
export function parseGoAddr(input: string): GoAddrResult {
  for (let i = 0; i < input.length; i++) {
    switch (input[i]) {
      case '.':
        return parseIPv4(input)
      case ':':
        return parseIPv6(input)
      case '%':
        // Assume an IPv6 address with a zone, but with the address missing (as Go does).
        return failure(input, 'missing IPv6 address')
    }
  }
  return failure(input, 'unable to parse IP')
}

function failure(input: string, message: string, at = ''): GoAddrResult {
  return { ok: false, error: addrError(input, message, at) }
}

function addrError(input: string, message: string, at = ''): string {
  const base = `ParseAddr(${goQuoteBytes(input)}): ${message}`
  return at === '' ? base : `${base} (at ${goQuoteBytes(at)})`
}

/** The IPv4-mapped prefix of As16 (`::ffff:0:0/96`). */
const V4_IN_V6_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]

function parseIPv4(input: string): GoAddrResult {
  const fields = [0, 0, 0, 0]
  const error = parseIPv4Fields(input, 0, input.length, fields, 0)
  if (error !== undefined) return { ok: false, error }
  return { ok: true, is4: true, bytes: [...V4_IN_V6_PREFIX, ...fields], zone: '' }
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57
}

/**
 * parseIPv4Fields over input[start:end]: writes four decimal octets to fields[at..at+3], or
 * returns Go's error.
 */
function parseIPv4Fields(
  input: string,
  start: number,
  end: number,
  fields: number[],
  at: number,
): string | undefined {
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
      fields[at + position] = value
      position++
      value = 0
      digits = 0
    } else {
      return addrError(input, 'unexpected character', s.slice(i))
    }
  }
  if (position < 3) return addrError(input, 'IPv4 address too short')
  fields[at + 3] = value
  return undefined
}

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48
  if (code >= 97 && code <= 102) return code - 87
  if (code >= 65 && code <= 70) return code - 55
  return -1
}

/** parseIPv6: an IPv6 address with an optional non-empty zone. */
function parseIPv6(input: string): GoAddrResult {
  let s = input
  let zone = ''
  const percent = s.indexOf('%')
  if (percent !== -1) {
    zone = s.slice(percent + 1)
    s = s.slice(0, percent)
    if (zone === '') return failure(input, 'zone must be a non-empty string')
  }
  const ip: number[] = new Array<number>(16).fill(0)
  let ellipsis = -1
  if (s.startsWith('::')) {
    ellipsis = 0
    s = s.slice(2)
    if (s === '') return { ok: true, is4: false, bytes: ip, zone }
  }
  let i = 0
  while (i < 16) {
    let offset = 0
    let accumulator = 0
    for (; offset < s.length; offset++) {
      const digit = hexValue(s.charCodeAt(offset))
      if (digit < 0) break
      accumulator = accumulator * 16 + digit
      if (offset > 3) return failure(input, 'each group must have 4 or less digits', s)
      if (accumulator > 0xffff) return failure(input, 'IPv6 field has value >=2^16', s)
    }
    if (offset === 0) {
      return failure(input, 'each colon-separated field must have at least one digit', s)
    }
    if (offset < s.length && s[offset] === '.') {
      if (ellipsis < 0 && i !== 12) {
        return failure(
          input,
          'embedded IPv4 address must replace the final 2 fields of the address',
          s,
        )
      }
      if (i + 4 > 16) {
        return failure(
          input,
          'too many hex fields to fit an embedded IPv4 at the end of the address',
          s,
        )
      }
      const end = zone.length > 0 ? input.length - zone.length - 1 : input.length
      const error = parseIPv4Fields(input, end - s.length, end, ip, i)
      if (error !== undefined) return { ok: false, error }
      s = ''
      i += 4
      break
    }
    ip[i] = accumulator >> 8
    ip[i + 1] = accumulator & 0xff
    i += 2
    s = s.slice(offset)
    if (s === '') break
    if (s[0] !== ':') return failure(input, 'unexpected character, want colon', s)
    if (s.length === 1) return failure(input, 'colon must be followed by more characters', s)
    s = s.slice(1)
    if (s[0] === ':') {
      if (ellipsis >= 0) return failure(input, 'multiple :: in address', s)
      ellipsis = i
      s = s.slice(1)
      if (s === '') break
    }
  }
  if (s !== '') return failure(input, 'trailing garbage after address', s)
  if (i < 16) {
    if (ellipsis < 0) return failure(input, 'address string too short')
    // Move what follows the `::` to the end; the `::` is the zeros between.
    const zeros = 16 - i
    ip.splice(ellipsis, 0, ...new Array<number>(zeros).fill(0))
    ip.length = 16
  } else if (ellipsis >= 0) {
    return failure(input, 'the :: must expand to at least one field of zeros')
  }
  return { ok: true, is4: false, bytes: ip, zone }
}
