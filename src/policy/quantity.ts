/**
 * Kubernetes resource quantities (`resource.Quantity`, k8s.io/apimachinery), exact, with BigInt.
 *
 * The API server parses a quantity, remembers its notation — binary suffix (`Ki`…`Ei`), decimal
 * SI suffix (`n`, `u`, `m`, none, `k`…`E`) or decimal exponent (`e3`, `E3`) — and writes it back
 * in that notation's canonical form: the largest suffix that keeps the number whole.
 * `1024Mi` → `1Gi`, `1000M` → `1G`, `0.5Gi` → `512Mi`, `1.5` → `1500m`, `1000` → `1k`. The notation
 * survives, so `1e3` stays `1e3` (not `1k`) and `1Gi` does not become `1073741824`; compare
 * values with `quantityValueText` when notation must not matter.
 *
 * Like apimachinery: values are rounded up (away from zero) to 1n; binary values are capped at
 * ±(2^63−1); a binary value below 1024 or not whole is written in decimal SI; and a decimal SI
 * value whose exponent has no suffix (above `E`) loses its suffix (`1000E` is written `1`), a
 * quirk we copy because it is what the API server stores. Unlike apimachinery, exponents outside
 * the int32 range (which Go silently wraps) and texts over 1024 characters are rejected: both
 * bound the work one admission request can cause.
 */

type QuantityFormat = 'BinarySI' | 'DecimalSI' | 'DecimalExponent'

/** `mantissa × 10^exponent`; the mantissa has no trailing zero digit and zero is `0 × 10^0`. */
interface Quantity {
  readonly mantissa: bigint
  readonly exponent: number
  readonly format: QuantityFormat
}

const MAX_TEXT_LENGTH = 1024
const MAX_INT64 = (1n << 63n) - 1n
const NANO = -9

// apimachinery's scanner: sign, digits, optional fraction, then a suffix made of these letters,
// an optional sign and digits. Which suffixes are valid is decided afterwards.
const SYNTAX = /^([+-]?)(\d*)(?:\.(\d*))?([eEinumkKMGTP]*[+-]?\d*)$/
const DECIMAL_EXPONENT = /^[eE][+-]?\d+$/

const DECIMAL_SUFFIXES: ReadonlyMap<string, number> = new Map([
  ['n', -9],
  ['u', -6],
  ['m', -3],
  ['', 0],
  ['k', 3],
  ['M', 6],
  ['G', 9],
  ['T', 12],
  ['P', 15],
  ['E', 18],
])
const SUFFIX_BY_EXPONENT: ReadonlyMap<number, string> = new Map(
  [...DECIMAL_SUFFIXES].map(([suffix, exponent]) => [exponent, suffix]),
)
const BINARY_SUFFIXES: ReadonlyMap<string, bigint> = new Map([
  ['Ki', 10n],
  ['Mi', 20n],
  ['Gi', 30n],
  ['Ti', 40n],
  ['Pi', 50n],
  ['Ei', 60n],
])
const BINARY_SUFFIX_BY_POWER = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'] as const

// Go's unicode.IsSpace, which strings.TrimSpace uses (JavaScript's trim() differs at U+0085/U+FEFF).
const GO_SPACE =
  /^[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g

/** The quantity a text denotes (apimachinery's `ParseQuantity`), or undefined when invalid. */
export function parseQuantity(text: string): Quantity | undefined {
  if (text === '' || text.length > MAX_TEXT_LENGTH) return undefined
  const match = SYNTAX.exec(text)
  if (!match) return undefined
  const [, sign = '', whole = '', fraction = '', suffix = ''] = match
  let mantissa = BigInt(`${whole}${fraction}` || '0')
  let exponent = -fraction.length
  let format: QuantityFormat
  const decimal = DECIMAL_SUFFIXES.get(suffix)
  const binary = BINARY_SUFFIXES.get(suffix)
  if (decimal !== undefined) {
    format = 'DecimalSI'
    exponent += decimal
  } else if (binary !== undefined) {
    format = 'BinarySI'
    mantissa <<= binary
  } else if (DECIMAL_EXPONENT.test(suffix)) {
    const power = Number(suffix.slice(1))
    if (!Number.isSafeInteger(power) || power < -(2 ** 31) || power >= 2 ** 31) return undefined
    format = 'DecimalExponent'
    exponent += power
  } else {
    return undefined
  }
  // A number with no digit at all (`Gi`, `-`, `.`) is zero — except where apimachinery takes its
  // arbitrary-precision path (exponents below −9, `Pi`, `Ei`), which rejects it.
  if (whole === '' && fraction === '' && (binary === undefined ? exponent < NANO : binary >= 50n))
    return undefined
  if (sign === '-') mantissa = -mantissa
  let quantity = roundUpQuantity(normalised(mantissa, exponent, format), NANO)
  if (format === 'BinarySI') quantity = capped(quantity)
  return quantity
}

/** The API server's canonical text of a quantity (apimachinery's `Quantity.String`). */
export function formatQuantity(quantity: Quantity): string {
  const { mantissa, exponent, format } = quantity
  if (mantissa === 0n) return '0'
  // Parsed binary quantities are whole only with exponent ≥ 0 and never exceed 2^63−1, so the
  // exponent bound merely keeps a hand-made Quantity from asking for a huge power of ten.
  if (format === 'BinarySI' && exponent >= 0 && exponent <= 18) {
    let whole = abs(mantissa) * 10n ** BigInt(exponent)
    if (whole >= 1024n) {
      let power = 0
      while (whole >= 1024n && whole % 1024n === 0n) {
        whole /= 1024n
        power++
      }
      return `${mantissa < 0n ? '-' : ''}${whole}${BINARY_SUFFIX_BY_POWER[power] ?? ''}`
    }
  }
  // Decimal: lower the exponent to a multiple of three, widening the mantissa.
  let digits = mantissa
  let power = exponent
  while (power % 3 !== 0) {
    digits *= 10n
    power--
  }
  if (format === 'DecimalExponent') return power === 0 ? `${digits}` : `${digits}e${power}`
  return `${digits}${SUFFIX_BY_EXPONENT.get(power) ?? ''}`
}

/** `parseQuantity` then `formatQuantity`: the text the API server stores, or undefined. */
export function canonicalQuantity(text: string): string | undefined {
  const quantity = parseQuantity(text)
  return quantity && formatQuantity(quantity)
}

/**
 * Rounds away from zero to a multiple of 10^scale (apimachinery's `Quantity.RoundUp`; the API
 * server applies it with scale −3 to resource lists).
 */
export function roundUpQuantity(quantity: Quantity, scale: number): Quantity {
  const { mantissa, exponent, format } = quantity
  if (exponent >= scale || mantissa === 0n) return quantity
  const magnitude = abs(mantissa)
  const shift = scale - exponent
  // More places to drop than the mantissa has digits: the result is one unit of 10^scale.
  const rounded =
    shift > magnitude.toString().length ? 1n : ceilDivide(magnitude, 10n ** BigInt(shift))
  return normalised(mantissa < 0n ? -rounded : rounded, scale, format)
}

/**
 * The quantity a JSON value decodes to, as the API server decodes it: a string with surrounding
 * white space trimmed, or a bare number (read from its JavaScript text, so its notation — not
 * its value — may differ from the one the original JSON token would have given).
 */
export function quantityFromJson(value: unknown): Quantity | undefined {
  if (typeof value === 'string') return parseQuantity(value.replace(GO_SPACE, ''))
  if (typeof value === 'number' && Number.isFinite(value)) return parseQuantity(String(value))
  return undefined
}

/**
 * A text that depends only on the value the API server stores for a quantity, whatever its
 * notation: `1Gi`, `1024Mi` and `1073741824` all give `1073741824`; `1k`, `1e3` and `1000` give
 * `1e3`. `roundToMilli` applies the rounding the API server gives resource lists.
 */
export function quantityValueText(value: unknown, roundToMilli = false): string | undefined {
  let quantity = quantityFromJson(value)
  if (quantity === undefined) return undefined
  if (roundToMilli) quantity = roundUpQuantity(quantity, -3)
  // Round-trip through the stored text so its quirks (a dropped suffix) are the value we keep.
  const stored = parseQuantity(formatQuantity(quantity)) ?? quantity
  return formatQuantity({ ...stored, format: 'DecimalExponent' })
}

function normalised(mantissa: bigint, exponent: number, format: QuantityFormat): Quantity {
  if (mantissa === 0n) return { mantissa, exponent: 0, format }
  const digits = abs(mantissa).toString()
  const zeros = digits.length - digits.replace(/0+$/, '').length
  if (zeros === 0) return { mantissa, exponent, format }
  const scale = 10n ** BigInt(zeros)
  return { mantissa: mantissa / scale, exponent: exponent + zeros, format }
}

/** Binary quantities are capped at ±(2^63−1); below one in magnitude they are decimal SI. */
function capped(quantity: Quantity): Quantity {
  const { mantissa, exponent } = quantity
  if (mantissa === 0n) return quantity
  const magnitude = abs(mantissa)
  if (exponent < 0) {
    const unit = 10n ** BigInt(-exponent)
    if (magnitude < unit) return { ...quantity, format: 'DecimalSI' }
    if (magnitude <= MAX_INT64 * unit) return quantity
  } else if (exponent <= 18 && magnitude * 10n ** BigInt(exponent) <= MAX_INT64) {
    return quantity
  }
  return normalised(mantissa < 0n ? -MAX_INT64 : MAX_INT64, 0, 'BinarySI')
}

function abs(value: bigint): bigint {
  return value < 0n ? -value : value
}

function ceilDivide(dividend: bigint, divisor: bigint): bigint {
  return (dividend + divisor - 1n) / divisor
}
