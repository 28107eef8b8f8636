import t from 'tap'
import { Writable } from 'node:stream'
import { createLogger } from '../../src/cli/logger.ts'

function capture(level: 'debug' | 'info' = 'debug') {
  const chunks: string[] = []
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'))
      callback()
    },
  })
  const lines = () =>
    chunks
      .join('')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
  return { logger: createLogger(level, sink), lines, text: () => chunks.join('') }
}

t.test('whatever is logged, no secret and no unbounded string is written', async (t) => {
  const secret = /hunter2|t0k3n|s3cr3t|pw@/
  const cases: { name: string; log: (logger: ReturnType<typeof capture>['logger']) => void }[] = [
    {
      name: 'a kubeconfig server URL with a password and a token',
      log: (l) => {
        l.info({ server: 'https://admin:hunter2@kube:6443/?token=t0k3n' }, 'reading')
      },
    },
    {
      name: 'a secret in the message',
      log: (l) => {
        l.warn('GET //u:hunter2@h failed')
      },
    },
    {
      name: 'an error object',
      log: (l) => {
        l.error({ err: new Error('dial https://h/cb#access_token=s3cr3t') }, 'failed')
      },
    },
    {
      name: 'an error alone',
      log: (l) => {
        l.error(new Error('password=hunter2 rejected'))
      },
    },
    {
      name: 'a child binding',
      log: (l) => {
        l.child({ url: 'https:///user:pw@h' }).info('child')
      },
    },
    {
      name: 'a nested field',
      log: (l) => {
        l.info({ a: { b: ['x:hunter2@h'] } }, 'nested')
      },
    },
    {
      name: 'a 1 MiB uid, name and namespace',
      log: (l) => {
        l.info({ uid: 'u'.repeat(1 << 20), name: 'n'.repeat(1 << 20), namespace: 'd' }, 'big')
      },
    },
    {
      name: 'a 1 MiB message',
      log: (l) => {
        l.info('m'.repeat(1 << 20))
      },
    },
  ]
  for (const { name, log } of cases) {
    const { logger, lines, text } = capture()
    log(logger)
    t.equal(lines().length, 1, `${name}: one line`)
    t.notMatch(text(), secret, `${name}: no secret`)
    t.ok(text().length < 16_384, `${name}: ${text().length} bytes`)
  }
})

t.test('rendered fields keep their meaning', async (t) => {
  const { logger, lines } = capture()
  logger.child({ component: 'x' }).error({ err: new Error('boom'), uid: 'abc' }, 'failed')
  const [line] = lines()
  t.match(line, {
    level: 'error',
    service: 'mcp-admission',
    component: 'x',
    uid: 'abc',
    msg: 'failed',
    err: { type: 'Error', message: 'boom', stack: /^Error: boom\n/ },
  })
  const plain = capture()
  plain.logger.info({ count: 2 }, 'server URL https://REDACTED@h')
  t.match(plain.lines()[0], { count: 2, msg: 'server URL https://REDACTED@h' })
})

t.test(
  "errors through pino's serializer: causes and codes kept, the stack only at debug",
  async (t) => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), {
      code: 'ECONNREFUSED',
    })
    const error = Object.assign(new Error('cannot list mcpservers', { cause }), { status: 503 })
    for (const level of ['info', 'debug'] as const) {
      const { logger, lines } = capture(level)
      logger.warn({ err: error, retryInMs: 250 }, 'list/watch failed; retrying')
      const [line] = lines()
      t.match(
        line?.['err'],
        {
          type: 'Error',
          message: 'cannot list mcpservers: connect ECONNREFUSED 127.0.0.1:6443',
          status: 503,
        },
        `${level}: the cause is part of the message, own properties are fields`,
      )
      const stack = (line?.['err'] as Record<string, unknown> | undefined)?.['stack']
      if (level === 'debug') t.match(stack, /^Error: cannot list mcpservers\n[^]*caused by: Error/)
      else t.equal(stack, undefined, 'no stack at info')
    }
  },
)
