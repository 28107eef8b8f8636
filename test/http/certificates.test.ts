/**
 * The certificate watcher on its own, with a clock the test moves: certificates wrong in time are
 * served only while nothing valid is, never ready, and warned about once, saying when; broken
 * pairs and files that are no files are refused with one readable warning line each (the error
 * object, its stack and OpenSSL's fields only at debug). A key that does not match its
 * certificate is refused whatever the two types, at start and on rotation, saying both types when
 * they differ.
 */

import { execFileSync } from 'node:child_process'
import { createPrivateKey, generateKeyPairSync, X509Certificate } from 'node:crypto'
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { pino } from 'pino'
import t from 'tap'
import type { Test } from 'tap'
import { CertificateWatcher, validityProblem } from '../../src/http/certificates.ts'
import type { CertificatePair } from '../../src/http/certificates.ts'
import {
  createDevCa,
  createDevCertificates,
  writeDevCertificates,
} from '../../src/http/dev-certs.ts'
import { hungFileSystem } from '../helpers/hung-file-system.ts'
import { KEY_TYPES, keyPem, pairsOfEveryType } from '../helpers/key-types.ts'

const DAY = 24 * 60 * 60 * 1000
/** Whole seconds: X.509 times have no finer grain. */
const T0 = new Date('2027-03-01T12:00:00.000Z')
const at = (offsetMs: number) => new Date(T0.getTime() + offsetMs)

interface Logged {
  readonly level: number
  readonly msg: string
  readonly [field: string]: unknown
}

/** A watcher on `dir` (started, never polling on its own), its log lines and its clock. */
async function watcher(t: Test, dir: string, level: 'info' | 'debug' = 'info') {
  const lines: Logged[] = []
  const logger = pino(
    { level },
    { write: (line: string) => lines.push(JSON.parse(line) as Logged) },
  )
  let now = T0
  const served: CertificatePair[] = []
  let rejected = 0
  const certificates = new CertificateWatcher({
    dir,
    pollIntervalMs: 3_600_000,
    logger,
    now: () => now,
    onPair: (pair) => served.push(pair),
    onRejected: () => rejected++,
  })
  await certificates.start()
  t.teardown(() => {
    certificates.stop()
  })
  return {
    certificates,
    lines,
    served,
    rejected: () => rejected,
    warnings: () => lines.filter((line) => line.level === 40),
    setNow: (date: Date) => {
      now = date
    },
  }
}

/** A pair valid from `from` to `to` (offsets from T0). */
function pair(from: number, to: number) {
  return createDevCertificates({ hosts: ['127.0.0.1'], notBefore: at(from), notAfter: at(to) })
}

t.test('validityProblem: the bounds are inclusive, as Go and OpenSSL check them', async (t) => {
  const window = { notBefore: at(0), notAfter: at(DAY) }
  const rows: readonly (readonly [Date, string | undefined])[] = [
    [at(-1), `not valid until ${at(0).toISOString()}`],
    [at(0), undefined],
    [at(1), undefined],
    [at(DAY), undefined],
    [at(DAY + 1), `expired at ${at(DAY).toISOString()}`],
    [at(-365 * DAY), `not valid until ${at(0).toISOString()}`],
    [at(365 * DAY), `expired at ${at(DAY).toISOString()}`],
  ]
  for (const [now, problem] of rows)
    t.equal(validityProblem(window, now), problem, now.toISOString())
})

t.test(
  'a certificate wrong in time is served only while no valid one is, and never ready',
  async (t) => {
    interface Row {
      readonly name: string
      /** Validity of the first pair and of the one that replaces it (offsets from T0). */
      readonly first: readonly [number, number]
      readonly second: readonly [number, number]
      /** Which pair is served after the second is written, and whether that makes it ready. */
      readonly served: 'first' | 'second'
      readonly ready: boolean
      /** The warning about the second pair, or about the first when it is kept. */
      readonly warning: RegExp | undefined
    }
    const rows: readonly Row[] = [
      {
        name: 'valid, renewed by a valid one',
        first: [-DAY, DAY],
        second: [-60_000, 30 * DAY],
        served: 'second',
        ready: true,
        warning: undefined,
      },
      {
        name: 'valid, "renewed" by an expired one: the valid one stays',
        first: [-DAY, DAY],
        second: [-30 * DAY, -DAY],
        served: 'first',
        ready: true,
        warning: new RegExp(
          `^serving certificate not loaded \\(keeping the current certificate, valid until ${at(DAY).toISOString()}\\): .*tls\\.crt: expired at ${at(-DAY).toISOString()}$`,
        ),
      },
      {
        name: 'valid, renewed by one not valid yet: the valid one stays',
        first: [-DAY, DAY],
        second: [60_000, 30 * DAY],
        served: 'first',
        ready: true,
        warning: /: .*tls\.crt: not valid until /,
      },
      {
        name: 'expired, renewed by a valid one: ready again',
        first: [-30 * DAY, -DAY],
        second: [-60_000, 30 * DAY],
        served: 'second',
        ready: true,
        warning: undefined,
      },
      {
        name: 'expired, replaced by another expired one: served, not ready',
        first: [-30 * DAY, -2 * DAY],
        second: [-30 * DAY, -DAY],
        served: 'second',
        ready: false,
        warning: new RegExp(
          `^serving certificate expired at ${at(-DAY).toISOString()}: not ready until a currently valid certificate is loaded$`,
        ),
      },
      {
        name: 'not valid yet, replaced by one not valid yet either',
        first: [DAY, 2 * DAY],
        second: [60_000, DAY],
        served: 'second',
        ready: false,
        warning: new RegExp(`^serving certificate not valid until ${at(60_000).toISOString()}: `),
      },
    ]
    for (const row of rows) {
      await t.test(row.name, async (t) => {
        const dir = t.testdir()
        const first = await pair(...row.first)
        const second = await pair(...row.second)
        await writeDevCertificates(dir, first)
        const w = await watcher(t, dir)
        t.equal(w.served.length, 1, 'the first pair is served whatever its time')
        const before = w.warnings().length
        await writeDevCertificates(dir, second)
        await w.certificates.reload()
        const expected = row.served === 'first' ? first.cert : second.cert
        t.equal(
          w.certificates.current?.cert.toString(),
          expected,
          `the ${row.served} pair is served`,
        )
        t.equal(
          w.certificates.currentProblem() === undefined,
          row.ready,
          row.ready ? 'ready' : 'not ready',
        )
        const warnings = w.warnings().slice(before)
        if (row.warning === undefined) t.same(warnings, [], 'no warning')
        else {
          t.equal(warnings.length, 1, 'one warning')
          t.match(warnings[0]?.msg, row.warning)
        }
        // Read again, unchanged: nothing new is logged.
        await w.certificates.reload()
        t.equal(w.warnings().length, before + warnings.length, 'each problem is warned about once')
      })
    }
  },
)

t.test('loaded at start while expired or not yet valid: a warning saying when', async (t) => {
  const rows: readonly (readonly [readonly [number, number], RegExp])[] = [
    [
      [-30 * DAY, -DAY],
      new RegExp(`^serving certificate expired at ${at(-DAY).toISOString()}: not ready`),
    ],
    [[-30 * DAY, -1000], /^serving certificate expired at /],
    [
      [1000, DAY],
      new RegExp(`^serving certificate not valid until ${at(1000).toISOString()}: not ready`),
    ],
  ]
  for (const [validity, warning] of rows) {
    const dir = t.testdir()
    await writeDevCertificates(dir, await pair(...validity))
    const w = await watcher(t, dir)
    t.not(w.certificates.current, undefined, 'served (nothing better is there)')
    t.not(w.certificates.currentProblem(), undefined, 'not ready')
    t.same(
      w.lines.filter((line) => line.msg === 'serving certificate loaded'),
      [],
      'not logged as loaded at info',
    )
    t.equal(w.warnings().length, 1)
    t.match(w.warnings()[0], { msg: warning, notAfter: at(validity[1]).toISOString() })
  }
})

t.test(
  'a certificate that expires while served: not ready from that moment, warned once',
  async (t) => {
    const dir = t.testdir()
    await writeDevCertificates(dir, await pair(-DAY, DAY))
    const w = await watcher(t, dir)
    t.equal(w.certificates.currentProblem(), undefined)
    w.setNow(at(DAY + 1000))
    // Readiness asks at its own time: no reload needed to turn it false.
    t.equal(w.certificates.currentProblem(), `expired at ${at(DAY).toISOString()}`)
    await w.certificates.reload()
    await w.certificates.reload()
    t.equal(w.warnings().length, 1, 'warned once')
    t.match(w.warnings()[0]?.msg, /^serving certificate expired at /)
    // cert-manager writes the renewed pair: ready again.
    await writeDevCertificates(dir, await pair(0, 30 * DAY))
    await w.certificates.reload()
    t.equal(w.certificates.currentProblem(), undefined, 'ready with the renewed pair')
  },
)

t.test('a pair that cannot be used: one readable warning line, the error at debug', async (t) => {
  const good = await createDevCertificates({ hosts: ['127.0.0.1'] })
  const other = await createDevCertificates({ hosts: ['127.0.0.1'] })
  const fifo = (path: string) => {
    execFileSync('mkfifo', [path])
  }
  const rows: readonly (readonly [string, (dir: string) => Promise<void>, RegExp])[] = [
    [
      'tls.crt not PEM',
      (d) => writeFile(join(d, 'tls.crt'), 'garbage'),
      /tls\.crt: not a PEM certificate \(no start line\)$/,
    ],
    [
      'tls.crt empty',
      (d) => writeFile(join(d, 'tls.crt'), ''),
      /tls\.crt: not a PEM certificate \(/,
    ],
    [
      'tls.key of another pair',
      (d) => writeFile(join(d, 'tls.key'), other.key),
      /tls\.key: does not match tls\.crt$/,
    ],
    [
      'tls.key not a key',
      (d) => writeFile(join(d, 'tls.key'), 'nope'),
      /tls\.key: not a usable private key \(/,
    ],
    [
      'tls.key encrypted',
      (d) =>
        writeFile(
          join(d, 'tls.key'),
          createPrivateKey(good.key).export({
            type: 'pkcs8',
            format: 'pem',
            cipher: 'aes-256-cbc',
            passphrase: 'secret',
          }),
        ),
      /tls\.key: not a usable private key \(encrypted: an unencrypted key is needed\)$/,
    ],
    [
      // The leaf (and so the match) is read, the chain behind it is not.
      'tls.crt with a garbled second certificate',
      (d) =>
        writeFile(
          join(d, 'tls.crt'),
          `${good.cert}\n-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`,
        ),
      /tls\.crt: not a usable PEM certificate chain \(.+\)$/,
    ],
    [
      'tls.crt in DER',
      (d) => writeFile(join(d, 'tls.crt'), new X509Certificate(good.cert).raw),
      /tls\.crt: not a usable PEM certificate chain \(no start line\)$/,
    ],
    ['tls.key missing', (d) => rm(join(d, 'tls.key')), /tls\.key: no such file$/],
    [
      'tls.crt a directory',
      async (d) => {
        await rm(join(d, 'tls.crt'))
        await mkdir(join(d, 'tls.crt'))
      },
      /tls\.crt: is a directory$/,
    ],
    [
      'tls.crt a FIFO',
      async (d) => {
        await rm(join(d, 'tls.crt'))
        fifo(join(d, 'tls.crt'))
      },
      /tls\.crt: not a regular file \(a FIFO\)$/,
    ],
    [
      'tls.key a FIFO',
      async (d) => {
        await rm(join(d, 'tls.key'))
        fifo(join(d, 'tls.key'))
      },
      /tls\.key: not a regular file \(a FIFO\)$/,
    ],
    [
      'tls.crt a link to /dev/zero',
      async (d) => {
        await rm(join(d, 'tls.crt'))
        await symlink('/dev/zero', join(d, 'tls.crt'))
      },
      /tls\.crt: not a regular file \(a character device\)$/,
    ],
    [
      'tls.crt larger than 1 MiB',
      (d) => writeFile(join(d, 'tls.crt'), `${good.cert}${'#'.repeat(1024 * 1024)}`),
      /tls\.crt: larger than 1 MiB \(\d+ bytes\)$/,
    ],
  ]
  for (const [name, breakIt, reason] of rows) {
    await t.test(name, async (t) => {
      const dir = t.testdir()
      await writeDevCertificates(dir, good)
      const w = await watcher(t, dir, 'debug')
      const served = w.certificates.current
      t.not(served, undefined)
      await breakIt(dir)
      const before = w.lines.length
      await w.certificates.reload()
      t.equal(w.certificates.current, served, 'the good pair keeps serving')
      t.equal(w.rejected(), 1, 'counted as rejected')
      const logged = w.lines.slice(before)
      const warnings = logged.filter((line) => line.level === 40)
      t.equal(warnings.length, 1, 'one warning')
      const warning = warnings[0] ?? { level: 0, msg: '' }
      t.match(
        warning.msg,
        /^serving certificate not loaded \(keeping the current certificate, valid until [^)]+\): /,
      )
      t.match(warning.msg, reason)
      t.notOk('err' in warning, 'no error object at warn')
      t.notMatch(
        JSON.stringify(warning),
        /error:[0-9A-F]{8}:|\n {4}at |stack/,
        'no OpenSSL code, no stack',
      )
      t.notMatch(warning.msg, /\n/, 'one line')
      const debug = logged.filter((line) => line.level === 20)
      t.equal(debug.length, 1, 'the error at debug')
      t.match(debug[0], { err: { message: String, stack: String } })
      // Read again, same failure: not logged again.
      await w.certificates.reload()
      t.equal(w.lines.length, before + logged.length, 'once per distinct failure')
    })
  }
})

/** A matching pair of each key type, valid at T0 (made once: RSA keys are slow to generate). */
const PAIRS = await pairsOfEveryType(await createDevCa(), {
  notBefore: at(-DAY),
  notAfter: at(DAY),
})

/**
 * Every certificate type beside a key of every type (another key where the types are the same),
 * and keys of types no serving certificate has. The reason names both types when they differ.
 */
function mismatchedPairs() {
  const rows: { name: string; cert: string; key: string; reason: string }[] = []
  for (const certType of KEY_TYPES) {
    for (const keyType of KEY_TYPES) {
      rows.push({
        name: `${keyType} key beside ${certType} certificate`,
        cert: PAIRS[certType].cert,
        key: keyType === certType ? PAIRS[certType].otherKey : PAIRS[keyType].key,
        reason:
          keyType === certType
            ? 'does not match tls.crt'
            : `does not match tls.crt (an ${keyType} key beside an ${certType} certificate)`,
      })
    }
  }
  const extra = [
    ['EC P-256', generateKeyPairSync('ec', { namedCurve: 'secp256k1' }), 'an EC secp256k1 key'],
    ['RSA', generateKeyPairSync('x25519'), 'an X25519 key'],
    [
      'Ed25519',
      generateKeyPairSync('dsa', { modulusLength: 1024, divisorLength: 160 }),
      'a DSA key',
    ],
  ] as const
  for (const [certType, { privateKey }, key] of extra) {
    rows.push({
      name: `${key} beside ${certType} certificate`,
      cert: PAIRS[certType].cert,
      key: keyPem(privateKey),
      reason: `does not match tls.crt (${key} beside an ${certType} certificate)`,
    })
  }
  return rows
}

const MISMATCHED = mismatchedPairs()

/** `EC P-256 key beside RSA certificate` as a directory name. */
const dirName = (name: string) => name.replace(/[^A-Za-z0-9-]+/g, '_')

t.test(
  'a key that does not match the certificate, whatever the types: not served at start',
  async (t) => {
    const root = t.testdir()
    for (const row of MISMATCHED) {
      const dir = join(root, dirName(row.name))
      await mkdir(dir)
      await writeFile(join(dir, 'tls.crt'), row.cert)
      await writeFile(join(dir, 'tls.key'), row.key)
      const w = await watcher(t, dir)
      t.equal(w.certificates.current, undefined, `${row.name}: not served`)
      t.equal(w.certificates.currentProblem(), 'none loaded', `${row.name}: not ready`)
      t.equal(w.rejected(), 1, `${row.name}: counted as rejected`)
      t.same(
        w.warnings().map((line) => line.msg),
        [
          `serving certificate not loaded (not serving yet): ${join(dir, 'tls.key')}: ${row.reason}`,
        ],
        `${row.name}: one warning`,
      )
    }
  },
)

t.test(
  'a key that does not match the certificate, whatever the types: on rotation the current pair keeps serving',
  async (t) => {
    const root = t.testdir()
    const good = await pair(-DAY, DAY)
    const validUntil = at(DAY).toISOString()
    for (const row of MISMATCHED) {
      const dir = join(root, dirName(row.name))
      await writeDevCertificates(dir, good)
      const w = await watcher(t, dir)
      const served = w.certificates.current
      t.not(served, undefined)
      await writeFile(join(dir, 'tls.crt'), row.cert)
      await writeFile(join(dir, 'tls.key'), row.key)
      await w.certificates.reload()
      t.equal(w.certificates.current, served, `${row.name}: the current pair keeps serving`)
      t.equal(w.certificates.currentProblem(), undefined, `${row.name}: still ready`)
      t.equal(w.served.length, 1, `${row.name}: the new pair is never served`)
      t.equal(w.rejected(), 1, `${row.name}: counted as rejected`)
      t.same(
        w.warnings().map((line) => line.msg),
        [
          `serving certificate not loaded (keeping the current certificate, valid until ${validUntil}): ${join(dir, 'tls.key')}: ${row.reason}`,
        ],
        `${row.name}: one warning`,
      )
    }
  },
)

t.test('a matching pair of every key type is served, with no warning', async (t) => {
  const root = t.testdir()
  for (const type of KEY_TYPES) {
    const dir = join(root, dirName(type))
    await mkdir(dir)
    await writeFile(join(dir, 'tls.crt'), PAIRS[type].cert)
    await writeFile(join(dir, 'tls.key'), PAIRS[type].key)
    const w = await watcher(t, dir)
    t.equal(w.certificates.current?.cert.toString(), PAIRS[type].cert, `${type}: served`)
    t.equal(w.certificates.currentProblem(), undefined, `${type}: ready`)
    t.same(w.warnings(), [], `${type}: no warning`)
    t.equal(w.rejected(), 0, `${type}: nothing rejected`)
  }
})

t.test(
  'a served certificate that expires is warned about then, not at the next poll',
  async (t) => {
    const dir = t.testdir()
    // Valid for about two more seconds (X.509 times are whole seconds); the poll is a minute away.
    const expiry = new Date(Math.ceil((Date.now() + 2_000) / 1000) * 1000)
    await writeDevCertificates(
      dir,
      await createDevCertificates({
        hosts: ['127.0.0.1'],
        notBefore: new Date(Date.now() - DAY),
        notAfter: expiry,
      }),
    )
    const lines: Logged[] = []
    const certificates = new CertificateWatcher({
      dir,
      pollIntervalMs: 60_000,
      logger: pino(
        { level: 'info' },
        { write: (line: string) => lines.push(JSON.parse(line) as Logged) },
      ),
      onPair: () => undefined,
    })
    await certificates.start()
    t.teardown(() => {
      certificates.stop()
    })
    const warned = () => lines.some((line) => line.level === 40)
    t.notOk(warned(), 'valid at start: no warning')
    const deadline = expiry.getTime() + 1_500
    while (!warned() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    const warning = lines.find((line) => line.level === 40)
    t.match(warning?.msg, `serving certificate expired at ${expiry.toISOString()}`)
  },
)

t.test(
  'stopped while a reload waits on the files: it ends at once, without a warning',
  async (t) => {
    const root = t.testdir({ held: {} })
    const dir = join(root, 'certs')
    await writeDevCertificates(dir, await pair(-DAY, DAY))
    const w = await watcher(t, dir)
    t.ok(w.certificates.current, 'serving')
    const hung = await hungFileSystem(join(root, 'held'))
    try {
      const reloading = w.certificates.reload()
      w.certificates.stop()
      const ended = await Promise.race([
        reloading.then(() => 'ended'),
        sleep(2_000, 'still reading'),
      ])
      t.equal(ended, 'ended', 'the reload ended with the stop, the files still unread')
      t.same(w.warnings(), [], 'no warning: stopping is no failure')
      t.equal(w.rejected(), 0)
      await w.certificates.reload()
      t.equal(w.rejected(), 0, 'a stopped watcher reads nothing more')
    } finally {
      // Before the test's teardown, which removes its directory through the same thread pool.
      await hung.release()
    }
  },
)
