import t from 'tap'
import { parseGoAddr } from '../../../src/policy/go/netip.ts'

/** netip.ParseAddr's Is4(), As16() and Zone(), and its errors below, from Go 1.26.8. */
const GO_ADDRESSES: readonly [string, boolean, readonly number[], string][] = [
  ['10.0.0.1', true, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 10, 0, 0, 1], ''],
  ['255.255.255.255', true, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 255, 255], ''],
  ['::', false, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], ''],
  ['::%eth0', false, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 'eth0'],
  ['::1', false, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], ''],
  ['::ffff:10.0.0.1', false, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 10, 0, 0, 1], ''],
  ['fe80::1%en0', false, [254, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], 'en0'],
  ['fe80::%x%y', false, [254, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 'x%y'],
  ['1:2:3:4:5:6:7:8', false, [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8], ''],
  ['1::8', false, [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8], ''],
  ['1:2::', false, [0, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], ''],
  ['::1.2.3.4', false, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4], ''],
  ['ff::ff:1.2.3.4', false, [0, 255, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 1, 2, 3, 4], ''],
  ['1:2:3:4:5:6:1.2.3.4', false, [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 1, 2, 3, 4], ''],
  ['ABCD:ef01::', false, [171, 205, 239, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], ''],
]

t.test("the address's bytes and zone, as Go's netip.Addr holds them", async (t) => {
  for (const [input, is4, bytes, zone] of GO_ADDRESSES) {
    t.same(parseGoAddr(input), { ok: true, is4, bytes, zone }, input)
  }
})

t.test('what is no address keeps its reason', async (t) => {
  const cases: [string, string][] = [
    [
      '1:2:3.4.5.6',
      'ParseAddr("1:2:3.4.5.6"): embedded IPv4 address must replace the final 2 fields of the address (at "3.4.5.6")',
    ],
    [
      '1::2:3:4:5:6:7:1.2.3.4',
      'ParseAddr("1::2:3:4:5:6:7:1.2.3.4"): too many hex fields to fit an embedded IPv4 at the end of the address (at "1.2.3.4")',
    ],
    [
      '1:2:3:4::5:6:7:8',
      'ParseAddr("1:2:3:4::5:6:7:8"): the :: must expand to at least one field of zeros',
    ],
  ]
  for (const [input, error] of cases) t.same(parseGoAddr(input), { ok: false, error }, input)
  t.same(parseGoAddr('1.2.3'), {
    ok: false,
    error: 'ParseAddr("1.2.3"): IPv4 address too short',
  })
  t.same(parseGoAddr('::1.2.3.04'), {
    ok: false,
    error: 'ParseAddr("::1.2.3.04"): IPv4 field has octet with leading zero',
  })
  t.same(parseGoAddr('1::2::3'), {
    ok: false,
    error: 'ParseAddr("1::2::3"): multiple :: in address (at ":3")',
  })
})
