/**
 * KubeconfigCredentials reads the TLS files the current cluster and user name through the bounded
 * reader: at start (a FIFO, a device or a missing file is an Error naming the field and file,
 * before anything is asked) and again for each request, as the client read them, so a rotated
 * certificate is used; a file's bytes win over the same field's `-data`, as the client let them.
 */

import { execFileSync } from 'node:child_process'
import { rm, writeFile } from 'node:fs/promises'
import type https from 'node:https'
import { join } from 'node:path'
import { KubeConfig } from '@kubernetes/client-node'
import t from 'tap'
import { readExecConfig } from '../../src/cluster/exec-credential.ts'
import { kubeConfigCredentials } from '../../src/cluster/kubeconfig-credentials.ts'
import { KubeconfigFileError } from '../../src/cluster/kubeconfig-files.ts'
import { execPlugin, runsOf } from '../helpers/exec-plugin.ts'

/** One cluster (https, so a CA is allowed) and one user with these fields. */
function configWith(cluster: Record<string, unknown>, user: Record<string, unknown>): KubeConfig {
  const config = new KubeConfig()
  config.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1', skipTLSVerify: false, ...cluster }],
    users: [{ name: 'u', ...user }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  })
  return config
}

const base64 = (text: string) => Buffer.from(text).toString('base64')

t.test('start refuses a FIFO, a device or a missing file, naming field and file', async (t) => {
  const dir = t.testdir({ 'client.crt': 'cert' })
  const fifo = join(dir, 'fifo')
  execFileSync('mkfifo', [fifo])
  const rows = [
    [
      { caFile: fifo },
      {},
      'cluster "c"',
      `certificate-authority ${fifo}: not a regular file (a FIFO)`,
    ],
    [
      {},
      { certFile: '/dev/zero' },
      'user "u"',
      'client-certificate /dev/zero: not a regular file (a character device)',
    ],
    [
      {},
      { certFile: join(dir, 'client.crt'), keyFile: fifo },
      'user "u"',
      `client-key ${fifo}: not a regular file (a FIFO)`,
    ],
    [
      {},
      { keyFile: join(dir, 'gone') },
      'user "u"',
      `client-key ${join(dir, 'gone')}: no such file`,
    ],
  ] as const
  for (const [cluster, user, owner, message] of rows) {
    const credentials = kubeConfigCredentials(configWith(cluster, user))
    const error: unknown = await credentials.start().then(
      () => undefined,
      (caught: unknown) => caught,
    )
    t.type(error, KubeconfigFileError, message)
    t.match(error, { owner, message })
  }
})

t.test('each request reads the files again: a rotated certificate is used', async (t) => {
  const dir = t.testdir({ 'ca.crt': 'ca-1', 'client.crt': 'cert-1', 'client.key': 'key-1' })
  const credentials = kubeConfigCredentials(
    configWith(
      // The file wins over the data of the same field, as it did when the client read it.
      { caFile: join(dir, 'ca.crt'), caData: base64('ca-data') },
      { certFile: join(dir, 'client.crt'), keyFile: join(dir, 'client.key'), token: 'static' },
    ),
  )
  await credentials.start()
  const applied = async () => {
    const options: https.RequestOptions = {}
    await credentials.applyTo(options)
    const text = (value: unknown) => (Buffer.isBuffer(value) ? value.toString('utf8') : value)
    return {
      ca: text(options.ca),
      cert: text(options.cert),
      key: text(options.key),
      authorization: (options.headers as Record<string, unknown>)['Authorization'],
      agent: options.agent,
    }
  }
  t.same(await applied(), {
    ca: 'ca-1',
    cert: 'cert-1',
    key: 'key-1',
    authorization: 'Bearer static',
    agent: undefined,
  })
  await writeFile(join(dir, 'client.crt'), 'cert-2')
  await writeFile(join(dir, 'client.key'), 'key-2')
  t.match(await applied(), { ca: 'ca-1', cert: 'cert-2', key: 'key-2' }, 'the rotated pair')
  // A file replaced by a FIFO after start: the request fails at once, nothing blocks.
  await rm(join(dir, 'client.key'))
  execFileSync('mkfifo', [join(dir, 'client.key')])
  await t.rejects(credentials.applyTo({}), {
    message: `client-key ${join(dir, 'client.key')}: not a regular file (a FIFO)`,
  })
})

t.test('the -data forms are still applied by the client', async (t) => {
  const credentials = kubeConfigCredentials(
    configWith({ caData: base64('ca-data') }, { certData: base64('cert'), keyData: base64('key') }),
  )
  await credentials.start()
  const options: https.RequestOptions = {}
  await credentials.applyTo(options)
  t.same([options.ca, options.cert, options.key].map(String), ['ca-data', 'cert', 'key'])
})

t.test('an exec plugin is given the CA file as read at start, inline', async (t) => {
  const dir = t.testdirName
  const plugin = execPlugin(dir, 'token', { provideClusterInfo: true })
  t.testdir({ ...plugin.files, 'ca.crt': 'ca-pem' })
  const credentials = kubeConfigCredentials(configWith({ caFile: join(dir, 'ca.crt') }, {}), {
    exec: readExecConfig(plugin.exec, dir),
  })
  t.teardown(() => {
    credentials.close()
  })
  await credentials.start()
  const [run] = await runsOf(plugin.log)
  t.match(run?.info, {
    spec: {
      cluster: { server: 'https://127.0.0.1:1', 'certificate-authority-data': base64('ca-pem') },
    },
  })
})
