/**
 * Go strings are byte sequences; JavaScript strings are UTF-16. The ports of Go parsers here
 * (net/url, net/netip) run on "byte strings", one character per UTF-8 byte (codes 0–255), so that
 * every index, slice and error excerpt matches Go's byte for byte.
 */

const NON_ASCII = /[\u0080-\uffff]/

/**
 * The UTF-8 bytes of `text` as a byte string. A lone surrogate becomes U+FFFD's bytes, which is
 * what Go sees: the API server's JSON decoder replaces it so before any Go code reads the value.
 */
export function toGoBytes(text: string): string {
  // ASCII, by far the usual case, is its own encoding.
  if (!NON_ASCII.test(text)) return text
  let out = ''
  for (const char of text) {
    let code = char.codePointAt(0) ?? 0xfffd
    if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd
    if (code < 0x80) out += char
    else if (code < 0x800) out += String.fromCharCode(0xc0 | (code >> 6), 0x80 | (code & 0x3f))
    else if (code < 0x10000) {
      out += String.fromCharCode(
        0xe0 | (code >> 12),
        0x80 | ((code >> 6) & 0x3f),
        0x80 | (code & 0x3f),
      )
    } else {
      out += String.fromCharCode(
        0xf0 | (code >> 18),
        0x80 | ((code >> 12) & 0x3f),
        0x80 | ((code >> 6) & 0x3f),
        0x80 | (code & 0x3f),
      )
    }
  }
  return out
}

/** Text of a byte string, each invalid UTF-8 byte read as U+FFFD (Go's `[]rune(s)`). */
export function fromGoBytes(bytes: string): string {
  if (!NON_ASCII.test(bytes)) return bytes
  let out = ''
  for (let i = 0; i < bytes.length;) {
    const { rune, width } = decodeRune(bytes, i)
    out += String.fromCodePoint(rune)
    i += width
  }
  return out
}

export const RUNE_ERROR = 0xfffd

/**
 * Go's utf8.DecodeRuneInString at byte `i`: the rune and its width, or (RUNE_ERROR, 1) for an
 * invalid byte (bad lead byte, short or overlong sequence, surrogate, or above U+10FFFF).
 */
export function decodeRune(bytes: string, i: number): { rune: number; width: number } {
  const lead = bytes.charCodeAt(i)
  if (lead < 0x80) return { rune: lead, width: 1 }
  const invalid = { rune: RUNE_ERROR, width: 1 }
  const [width, min, low, high] =
    lead >= 0xc2 && lead <= 0xdf
      ? [2, 0x80, 0x80, 0xbf]
      : lead === 0xe0
        ? [3, 0x800, 0xa0, 0xbf]
        : lead === 0xed
          ? [3, 0x800, 0x80, 0x9f] // no surrogates
          : lead >= 0xe1 && lead <= 0xef
            ? [3, 0x800, 0x80, 0xbf]
            : lead === 0xf0
              ? [4, 0x10000, 0x90, 0xbf]
              : lead >= 0xf1 && lead <= 0xf3
                ? [4, 0x10000, 0x80, 0xbf]
                : lead === 0xf4
                  ? [4, 0x10000, 0x80, 0x8f] // at most U+10FFFF
                  : [0, 0, 0, 0]
  if (width === 0 || i + width > bytes.length) return invalid
  // The second byte has a range of its own (it rules out overlong forms); the rest are 80–BF.
  const second = bytes.charCodeAt(i + 1)
  if (second < low || second > high) return invalid
  let rune = lead & (0xff >> (width + 1))
  rune = (rune << 6) | (second & 0x3f)
  for (let k = 2; k < width; k++) {
    const next = bytes.charCodeAt(i + k)
    if (next < 0x80 || next > 0xbf) return invalid
    rune = (rune << 6) | (next & 0x3f)
  }
  return rune < min ? invalid : { rune, width }
}

/** The number of UTF-8 bytes of `text` (lone surrogates count as U+FFFD, 3 bytes). */
export function utf8Length(text: string, from = 0): number {
  let bytes = 0
  for (let i = from; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) bytes += 1
    else if (code < 0x800) bytes += 2
    else if (code >= 0xd800 && code <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 4
      i++
    } else bytes += 3
  }
  return bytes
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff
}
