/**
 * The OpenAPI `format`s the API server checks (k8s.io/kube-openapi/pkg/validation/strfmt), for
 * ajv. Only those the ToolHive CRDs use, and a few trivial ones, are here; any other format is
 * left unchecked (see UNCHECKED in schema-compile.ts), where the API server would check it.
 */

import { parseGoDuration } from '../go/duration.ts'
import { parseGoUrl } from '../go/url.ts'

const INT32 = 2 ** 31
/** int64 bounds as JSON numbers can hold them: beyond 2^53 the file loader already refused. */
const INT64 = 2 ** 63

/** strfmt's duration units (first of each row is the canonical one), matched by prefix. */
const DURATION_UNITS = [
  ['ns', 'nano'],
  ['us', 'µs', 'micro'],
  ['ms', 'milli'],
  ['s', 'sec'],
  ['m', 'min'],
  ['h', 'hr', 'hour'],
  ['d', 'day'],
  ['w', 'wk', 'week'],
] as const
const DURATION_PARTS = /(\d+)\s*([A-Za-zµ]+)/g

/** strfmt.ParseDuration: Go's time.ParseDuration, else `<n> <unit>` parts anywhere (`3 days`). */
function isDuration(text: string): boolean {
  if (parseGoDuration(text).ok) return true
  for (const [, , word = ''] of text.matchAll(DURATION_PARTS)) {
    const unit = word.toLowerCase()
    for (const variants of DURATION_UNITS) {
      const last = variants.length - 1
      if (variants.some((v, i) => v === unit || (i === last && unit.startsWith(v)))) return true
    }
  }
  return false
}

const DATE = String.raw`\d{4}-\d{2}-\d{2}`
const DATE_TIME = new RegExp(
  String.raw`^${DATE}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?$`,
)
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** Formats of integers: a number outside the range (or not whole) fails. */
export const INTEGER_FORMATS = {
  int32: (n: number) => Number.isInteger(n) && n >= -INT32 && n < INT32,
  int64: (n: number) => Number.isInteger(n) && n >= -INT64 && n < INT64,
} as const

/** Formats of strings. */
export const STRING_FORMATS: Readonly<Record<string, (text: string) => boolean>> = {
  duration: isDuration,
  'date-time': (text) => DATE_TIME.test(text),
  date: (text) => new RegExp(`^${DATE}$`).test(text),
  uri: (text) => parseGoUrl(text).ok,
  uuid: (text) => UUID.test(text),
  byte: (text) => BASE64.test(text),
}
