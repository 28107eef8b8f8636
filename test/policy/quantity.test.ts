import t from 'tap'
import {
  canonicalQuantity,
  formatQuantity,
  parseQuantity,
  quantityFromJson,
  quantityValueText,
  roundUpQuantity,
} from '../../src/policy/quantity.ts'

// Expected texts are what k8s.io/apimachinery v0.37.2 writes (`Quantity.String()` of
// `ParseQuantity(text)`), so each row is a vector from the API server's own code.
t.test('canonical text, as the API server writes it', async (t) => {
  const cases: [string, string][] = [
    ['0', '0'],
    ['1', '1'],
    ['1024Mi', '1Gi'],
    ['1000M', '1G'],
    ['0.5Gi', '512Mi'],
    ['1.5Gi', '1536Mi'],
    ['1000', '1k'],
    ['1500m', '1500m'],
    ['1.5', '1500m'],
    ['.5', '500m'],
    ['1.', '1'],
    ['007', '7'],
    ['+1Gi', '1Gi'],
    ['-1Gi', '-1Gi'],
    ['-1.5', '-1500m'],
    ['-0', '0'],
    // The notation survives: an exponent stays an exponent, binary stays binary.
    ['1e3', '1e3'],
    ['1E3', '1e3'],
    ['12e6', '12e6'],
    ['1e-3', '1e-3'],
    ['1024', '1024'],
    ['1Ki', '1Ki'],
    ['8Gi', '8Gi'],
    ['1023Ki', '1023Ki'],
    ['1Ei', '1Ei'],
    // Binary below 1024 or not whole is written in decimal SI.
    ['0.5Ki', '512'],
    ['1.5Ki', '1536'],
    ['1.1Ki', '1126400m'],
    // Rounded up to 1n; binary capped at 2^63−1; decimal not capped.
    ['1e-12', '1e-9'],
    ['0.1n', '1n'],
    ['100n', '100n'],
    ['1000000u', '1'],
    ['1024Ei', '9223372036854775807'],
    ['9223372036854775807', '9223372036854775807'],
    ['123456789012345678901234567890', '123456789012345678901234567890'],
    ['1e21', '1e21'],
    ['10010E', '10010E'],
    // apimachinery has no suffix above E and writes none: the stored value changes.
    ['1000E', '1'],
    // A number without digits is zero.
    ['.', '0'],
    ['-', '0'],
    ['Gi', '0'],
    ['k', '0'],
  ]
  for (const [text, canonical] of cases) {
    t.equal(canonicalQuantity(text), canonical, JSON.stringify(text))
    // Canonical texts are fixed points.
    t.equal(canonicalQuantity(canonical), canonical, `${JSON.stringify(canonical)} again`)
  }
})

t.test('invalid texts', async (t) => {
  const invalid = [
    '',
    '1 Gi',
    ' 1Gi',
    '1i',
    '1e',
    '1e+',
    '1.5.5',
    '1Gb',
    '1KiB',
    '0x10',
    '1m5',
    '1e99999999999999999999',
    // apimachinery's arbitrary-precision path rejects a number without digits.
    'Pi',
    'e-12',
    // Rejected here although Go would wrap the exponent to int32 (see the module comment).
    '1e4294967296',
    `1${'0'.repeat(1024)}`,
  ]
  for (const text of invalid) t.equal(parseQuantity(text), undefined, JSON.stringify(text))
})

t.test('huge exponents are kept symbolic, never expanded', async (t) => {
  t.equal(canonicalQuantity('1e2147483646'), '1e2147483646')
  t.equal(canonicalQuantity('1e2147483647'), '10e2147483646')
  t.equal(canonicalQuantity('5e-2147483648'), '1e-9')
  t.equal(quantityValueText('1E2147483646'), '1e2147483646')
})

t.test('rounding up to milli units, as the API server does for resource lists', async (t) => {
  const cases: [string, string][] = [
    ['0.0001', '1m'],
    ['100u', '1m'],
    ['-0.0001', '-1m'],
    ['1.0001', '1001m'],
    ['1Gi', '1Gi'],
    ['1e-12', '1e-3'],
    ['0', '0'],
  ]
  for (const [text, rounded] of cases) {
    const quantity = parseQuantity(text)
    t.ok(quantity, text)
    if (quantity) t.equal(formatQuantity(roundUpQuantity(quantity, -3)), rounded, text)
  }
})

t.test('JSON values decode as the API server decodes them', async (t) => {
  const decoded = (value: unknown): string | undefined => {
    const quantity = quantityFromJson(value)
    return quantity && formatQuantity(quantity)
  }
  t.equal(decoded(' 1Gi\n'), '1Gi', 'white space trimmed')
  t.equal(decoded('\u00a01Gi\u0085'), '1Gi', "Go's white space, not JavaScript's")
  t.equal(decoded('\ufeff1Gi'), undefined, 'a byte order mark is not white space to Go')
  t.equal(decoded(1024), '1024', 'a bare number')
  t.equal(decoded(0.5), '500m')
  const notQuantities = [null, undefined, true, {}, [], Number.NaN, Number.POSITIVE_INFINITY]
  for (const [i, value] of notQuantities.entries()) {
    t.equal(quantityFromJson(value), undefined, `not a quantity #${i}`)
  }
})

t.test('value texts ignore notation', async (t) => {
  const groups: [string, unknown[]][] = [
    ['1073741824', ['1Gi', '1024Mi', '1073741824', 1073741824, ' 1Gi ', '1.073741824G']],
    ['1e3', ['1k', '1e3', '1E3', '1000', 1000, '1.0k', '1000000m']],
    ['500e-3', ['0.5', '500m', '.5', 0.5, '5e-1']],
    ['0', ['0', '0Gi', '-0', 0, '0e5']],
    // The stored value after apimachinery drops the suffix.
    ['1', ['1000E', '1']],
  ]
  for (const [text, values] of groups) {
    for (const value of values) t.equal(quantityValueText(value), text, JSON.stringify(value))
  }
  t.equal(quantityValueText('100u', true), '1e-3', 'milli rounding')
  t.equal(quantityValueText('abc'), undefined)
})
