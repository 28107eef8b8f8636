/**
 * The pod's service account without client-node: the token and CA go on every request, the token
 * is read again once a minute old (on a clock the test turns), a token file that vanishes keeps
 * the last token with one warning, and missing or empty files at start are named.
 */

import type https from 'node:https'
import { rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import type { Test } from 'tap'
import {
  TOKEN_REREAD_MS,
  loadInClusterCredentials,
} from '../../src/cluster/in-cluster-credentials.ts'
import type { InClusterCredentials } from '../../src/cluster/in-cluster-credentials.ts'

const SERVER = 'https://10.0.0.1:443'
const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'

interface Logged {
  readonly level: 'info' | 'warn'
  readonly fields: unknown
  readonly message: string
}

/** A service-account directory holding `files`, and credentials loaded from it. */
async function load(
  t: Test,
  files: Record<string, string>,
  clock: { now: number } = { now: 0 },
): Promise<{ dir: string; logged: Logged[]; credentials: InClusterCredentials }> {
  const dir = t.testdir(files)
  const logged: Logged[] = []
  const logger = {
    info: (fields: unknown, message: string) => logged.push({ level: 'info', fields, message }),
    warn: (fields: unknown, message: string) => logged.push({ level: 'warn', fields, message }),
  }
  const loaded = await loadInClusterCredentials({
    server: SERVER,
    serviceAccountDir: dir,
    logger: logger as never,
    now: () => clock.now,
  })
  if ('problems' in loaded) throw new Error(loaded.problems.join('; '))
  return { dir, logged, credentials: loaded.credentials }
}

async function applied(credentials: InClusterCredentials): Promise<https.RequestOptions> {
  const options: https.RequestOptions = { method: 'GET', headers: { accept: 'application/json' } }
  await credentials.applyTo(options)
  return options
}

t.test('the token is the bearer token and ca.crt the only CA trusted', async (t) => {
  const { credentials } = await load(t, { token: 'jwt-one\n', 'ca.crt': CA })
  t.equal(credentials.server, SERVER)
  const options = await applied(credentials)
  t.same(options.headers, { accept: 'application/json', authorization: 'Bearer jwt-one' })
  t.equal(options.ca, CA.trim())
})

t.test('a missing, empty or unreadable token or CA at start is named', async (t) => {
  const rows: readonly [Record<string, string | Record<string, string>>, string][] = [
    [{}, 'DIR/token: no such file; DIR/ca.crt: no such file'],
    [{ token: 'jwt' }, 'DIR/ca.crt: no such file'],
    [{ token: ' \n', 'ca.crt': CA }, 'DIR/token: empty'],
    [{ token: 'jwt', 'ca.crt': '' }, 'DIR/ca.crt: empty'],
    [{ token: {}, 'ca.crt': CA }, 'DIR/token: is a directory'],
  ]
  for (const [files, expected] of rows) {
    const dir = t.testdir(files)
    const loaded = await loadInClusterCredentials({
      server: SERVER,
      serviceAccountDir: dir,
      logger: { info: () => undefined, warn: () => undefined } as never,
    })
    t.same(loaded, { problems: expected.replaceAll('DIR', dir).split('; ') }, expected)
  }
})

t.test('the token is read again once it is a minute old, not before', async (t) => {
  const clock = { now: 1_000 }
  const { dir, credentials } = await load(t, { token: 'old', 'ca.crt': CA }, clock)
  await writeFile(join(dir, 'token'), 'new')
  clock.now += TOKEN_REREAD_MS - 1
  t.same((await applied(credentials)).headers, {
    accept: 'application/json',
    authorization: 'Bearer old',
  })
  clock.now += 1
  t.same((await applied(credentials)).headers, {
    accept: 'application/json',
    authorization: 'Bearer new',
  })
  t.equal(TOKEN_REREAD_MS, 60_000, "client-go's period")
})

t.test('refresh reads the token at once', async (t) => {
  const { dir, credentials } = await load(t, { token: 'old', 'ca.crt': CA })
  await writeFile(join(dir, 'token'), 'rotated')
  await credentials.refresh()
  t.match((await applied(credentials)).headers, { authorization: 'Bearer rotated' })
})

t.test('a token file that vanishes keeps the last token and warns once', async (t) => {
  const clock = { now: 0 }
  const { dir, logged, credentials } = await load(t, { token: 'kept', 'ca.crt': CA }, clock)
  const tokenFile = join(dir, 'token')
  await rm(tokenFile)
  for (let i = 0; i < 3; i++) {
    clock.now += TOKEN_REREAD_MS
    t.match((await applied(credentials)).headers, { authorization: 'Bearer kept' })
    await credentials.refresh()
  }
  t.same(logged, [
    {
      level: 'warn',
      fields: { problem: `${tokenFile}: no such file` },
      message: 'cannot read the service account token again: keeping the last one',
    },
  ])
  // An empty file (a half-written one) is not a token either.
  await writeFile(tokenFile, '')
  await credentials.refresh()
  t.match((await applied(credentials)).headers, { authorization: 'Bearer kept' })
  await writeFile(tokenFile, 'back')
  await credentials.refresh()
  t.match((await applied(credentials)).headers, { authorization: 'Bearer back' })
  t.equal(logged.length, 2, 'no second warning for the empty file')
  t.match(logged[1], { level: 'info', message: 'token readable again' })
  t.notMatch(JSON.stringify(logged), /kept|back/, 'no token value is logged')
})
