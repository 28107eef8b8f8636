/**
 * An object file's bytes as the text kubectl reads from them. kubectl (cli-runtime's
 * FileVisitor) decodes a file with golang.org/x/text's BOM override over a UTF-8 decoder:
 * * a UTF-16 byte order mark (either order) switches to UTF-16, lone surrogates becoming U+FFFD;
 * * a UTF-8 byte order mark is dropped and the rest passed on as it is, unchecked;
 * * with no mark, each maximal ill-formed UTF-8 subsequence becomes one U+FFFD, as WHATWG's
 *   decoder (TextDecoder) does too.
 * After a UTF-8 mark, invalid UTF-8 is refused: kubectl's YAML reader refuses it there, and the
 * one case it reads (inside a JSON string) is not worth a reader of its own.
 */

import { ObjectFileError } from './load-errors.ts'

const utf8 = new TextDecoder('utf-8', { ignoreBOM: true })
const strictUtf8 = new TextDecoder('utf-8', { ignoreBOM: true, fatal: true })

/** The text of an object file, decoded as kubectl decodes it; `source` names it in a refusal. */
export function objectFileText(bytes: Uint8Array, source: string): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return utf16(bytes, 'utf-16le')
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return utf16(bytes, 'utf-16be')
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    const rest = bytes.subarray(3)
    try {
      return strictUtf8.decode(rest)
    } catch {
      const line = utf8.decode(rest.subarray(0, invalidUtf8Offset(rest))).split('\n').length
      throw new ObjectFileError(
        `${source}: invalid UTF-8 at line ${line} (after a UTF-8 byte order mark kubectl reads the bytes unchanged, and refuses them)`,
      )
    }
  }
  return utf8.decode(bytes)
}

function utf16(bytes: Uint8Array, encoding: 'utf-16le' | 'utf-16be'): string {
  return new TextDecoder(encoding, { ignoreBOM: true }).decode(bytes.subarray(2))
}

/** Where the first invalid UTF-8 sequence starts (the length when there is none). */
function invalidUtf8Offset(bytes: Uint8Array): number {
  let i = 0
  while (i < bytes.length) {
    const size = validSequenceLength(bytes, i)
    if (size === 0) return i
    i += size
  }
  return i
}

/**
 * The length of the valid UTF-8 sequence at `i`, or 0: the ranges of RFC 3629 (no overlong
 * forms, no surrogates, nothing past U+10FFFF), which Go's utf8.DecodeRune accepts too.
 */
export function validSequenceLength(bytes: Uint8Array, i: number): number {
  const b0 = bytes[i] ?? 0
  if (b0 < 0x80) return 1
  const continuation = (at: number, low = 0x80, high = 0xbf): boolean => {
    const b = bytes[at]
    return b !== undefined && b >= low && b <= high
  }
  if (b0 >= 0xc2 && b0 <= 0xdf) return continuation(i + 1) ? 2 : 0
  if (b0 >= 0xe0 && b0 <= 0xef) {
    const low = b0 === 0xe0 ? 0xa0 : 0x80
    const high = b0 === 0xed ? 0x9f : 0xbf
    return continuation(i + 1, low, high) && continuation(i + 2) ? 3 : 0
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    const low = b0 === 0xf0 ? 0x90 : 0x80
    const high = b0 === 0xf4 ? 0x8f : 0xbf
    return continuation(i + 1, low, high) && continuation(i + 2) && continuation(i + 3) ? 4 : 0
  }
  return 0
}

/**
 * Bytes as Go's encoding/json writes a string of them: each byte that starts no valid UTF-8
 * sequence becomes U+FFFD on its own (where WHATWG's decoder would merge a truncated sequence
 * into one). This is what `!!binary` content that is not text turns into.
 */
export function goJsonString(bytes: Uint8Array): string {
  let text = ''
  let start = 0
  let i = 0
  while (i < bytes.length) {
    const size = validSequenceLength(bytes, i)
    if (size > 0) {
      i += size
      continue
    }
    text += `${utf8.decode(bytes.subarray(start, i))}\uFFFD`
    i++
    start = i
  }
  return text + utf8.decode(bytes.subarray(start))
}
