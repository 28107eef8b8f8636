// Every duration of `serve` feeds a Node timer, which holds at most 2^31−1 ms and fires a longer
// delay after 1 ms: a poll interval of 600h would poll every millisecond, a shutdown delay of 600h
// would be none. So each is refused above that, and below zero, naming what set it.
import t from 'tap'
import { resolveServeConfig } from '../../src/cli/serve-config.ts'
import type { ServeOptions } from '../../src/cli/serve-config.ts'
import type { ServerConfig } from '../../src/http/server-config.ts'

const defaults = { samplesDir: '/pkg/samples/objects', devCertDir: '/repo/certs' }

/** Each duration setting: its option key, flag, variable and field in the server's config. */
const DURATIONS = [
  ['certPollInterval', '--cert-poll-interval', 'MCP_ADMISSION_CERT_POLL_INTERVAL'],
  ['shutdownDelay', '--shutdown-delay', 'MCP_ADMISSION_SHUTDOWN_DELAY'],
  ['drainTimeout', '--drain-timeout', 'MCP_ADMISSION_DRAIN_TIMEOUT'],
  ['keepAliveTimeout', '--keep-alive-timeout', 'MCP_ADMISSION_KEEP_ALIVE_TIMEOUT'],
] as const

const FIELD = {
  certPollInterval: 'certPollIntervalMs',
  shutdownDelay: 'shutdownDelayMs',
  drainTimeout: 'drainTimeoutMs',
  keepAliveTimeout: 'keepAliveTimeoutMs',
} as const satisfies Record<(typeof DURATIONS)[number][0], keyof ServerConfig>

function resolved(options: ServeOptions, env: Record<string, string>) {
  return resolveServeConfig(options, env, defaults)
}

function errorsOf(options: ServeOptions, env: Record<string, string>): string[] {
  const result = resolved(options, env)
  return 'errors' in result ? result.errors : []
}

const LONGEST = '596h31m23.647s'

t.test('2^31−1 ms, the longest a Node timer holds, is the longest duration taken', async (t) => {
  for (const [key, flag] of DURATIONS) {
    const result = resolved({ [key]: LONGEST }, {})
    t.equal(
      'config' in result ? result.config.server[FIELD[key]] : result.errors,
      2 ** 31 - 1,
      `${flag} ${LONGEST}`,
    )
  }
})

t.test(
  'a duration above 2^31−1 ms is refused, naming the flag or variable and the bound',
  async (t) => {
    for (const [key, flag, env] of DURATIONS) {
      for (const value of ['596h31m23.647001s', '596h31m24s', '600h', '2562047h']) {
        const bound = `must be at most ${LONGEST} (2147483647 ms), got ${JSON.stringify(value)}`
        t.same(errorsOf({ [key]: value }, {}), [`${flag}: ${bound}`], `${flag} ${value}`)
        t.same(errorsOf({}, { [env]: value }), [`${env}: ${bound}`], `${env}=${value}`)
      }
    }
  },
)

t.test('a negative duration must not be negative', async (t) => {
  for (const [key, flag, env] of DURATIONS) {
    for (const value of ['-5s', '-1ns', '-600h']) {
      const problem = `must not be negative, got ${JSON.stringify(value)}`
      t.same(errorsOf({ [key]: value }, {}), [`${flag}: ${problem}`], `${flag} ${value}`)
      t.same(errorsOf({}, { [env]: value }), [`${env}: ${problem}`], `${env}=${value}`)
    }
  }
  // Minus zero is zero (as Go reads it): no delay, nothing negative.
  const zero = resolved({ shutdownDelay: '-0s', drainTimeout: '-0' }, {})
  t.match('config' in zero && zero.config.server, { shutdownDelayMs: 0, drainTimeoutMs: 0 })
})

t.test('the minimums are kept, and said as before', async (t) => {
  t.same(errorsOf({ certPollInterval: '99ms' }, {}), [
    '--cert-poll-interval: must be at least 100 ms, got "99ms"',
  ])
  t.same(errorsOf({}, { MCP_ADMISSION_KEEP_ALIVE_TIMEOUT: '89.999s' }), [
    'MCP_ADMISSION_KEEP_ALIVE_TIMEOUT: must be at least 90000 ms, got "89.999s"',
  ])
  t.same(errorsOf({ certPollInterval: '100ms', keepAliveTimeout: '1m30s' }, {}), [])
})
