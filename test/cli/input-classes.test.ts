/**
 * Every hostile kind of path in every field that names a file (docs/cli.md, "What is read, and
 * its bounds"): a character device, a FIFO, a file over the bound, a directory, a dangling link.
 * Configuration (a kubeconfig and the files it names, `--crds`, `--client-ca`, the serving pair)
 * takes a regular file or nothing; an input (`check`'s files, `--objects`, a review file) also
 * takes a device, read to its bound. Either way the command ends at once with one line naming
 * the field and the path, exit 2. A FIFO as an input is read (test/cli/input-signals.test.ts).
 */

import { execFileSync } from 'node:child_process'
import { mkdir, symlink, truncate, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import type { Test } from 'tap'
import { KUBECONFIG_TLS_FILE_MAX_BYTES } from '../../src/cluster/kubeconfig-files.ts'
import { OBJECT_FILE_MAX_BYTES } from '../../src/cluster/load-files.ts'
import { REVIEW_MAX_BYTES } from '../../src/cli/review.ts'
import { KUBECONFIG_MAX_BYTES } from '../../src/cli/kubeconfig.ts'
import { CERTIFICATE_FILE_MAX_BYTES } from '../../src/http/certificates.ts'
import { MiB } from '../../src/files/bounded-read.ts'
import { runCli } from '../helpers/cli.ts'
import { kubeconfigText } from '../helpers/kubeconfig.ts'
import { serveInProcess } from '../helpers/serve-in-process.ts'

const OBJECTS = 'samples/objects'
const REVIEW = 'samples/reviews/runconfig-configmap-create.json'

type Class = 'device' | 'fifo' | 'oversized' | 'directory' | 'dangling'
const CLASSES: readonly Class[] = ['device', 'fifo', 'oversized', 'directory', 'dangling']

/** A path of each class in `dir`, the oversized one one byte over `bound`. */
async function pathsOf(dir: string, bound: number): Promise<Record<Class, string>> {
  await mkdir(dir, { recursive: true })
  const paths = {
    device: join(dir, 'device'),
    fifo: join(dir, 'fifo'),
    oversized: join(dir, 'oversized'),
    directory: join(dir, 'directory'),
    dangling: join(dir, 'dangling'),
  }
  await symlink('/dev/zero', paths.device)
  execFileSync('mkfifo', [paths.fifo])
  await writeFile(paths.oversized, '')
  await truncate(paths.oversized, bound + 1)
  await mkdir(paths.directory)
  await symlink(join(dir, 'gone'), paths.dangling)
  return paths
}

/** What the line says of a configuration file of each class. */
function configurationReason(path: string, cls: Class, bound: number): string {
  switch (cls) {
    case 'device':
      return `${path}: not a regular file (a character device)`
    case 'fifo':
      return `${path}: not a regular file (a FIFO)`
    case 'oversized':
      return `${path}: larger than ${bound / MiB} MiB (${bound + 1} bytes)`
    case 'directory':
      return `${path}: is a directory`
    case 'dangling':
      return `${path}: no such file`
  }
}

interface Outcome {
  readonly code: number
  readonly stderr: string
}

function refused(t: Test, outcome: Outcome, line: string): void {
  t.same(
    { code: outcome.code, stderr: outcome.stderr },
    { code: 2, stderr: `mcp-admission: ${line}\n` },
    line,
  )
}

t.test('every file of a kubeconfig, and the kubeconfig itself', async (t) => {
  const dir = t.testdir({ 'client.crt': 'not parsed\n' })
  const owners = {
    'certificate-authority': ['cluster "c"', KUBECONFIG_TLS_FILE_MAX_BYTES],
    'client-certificate': ['user "u"', KUBECONFIG_TLS_FILE_MAX_BYTES],
    'client-key': ['user "u"', KUBECONFIG_TLS_FILE_MAX_BYTES],
    tokenFile: ['user "u"', MiB],
  } as const
  for (const [field, [owner, bound]] of Object.entries(owners)) {
    const paths = await pathsOf(join(dir, field), bound)
    for (const cls of CLASSES) {
      const user: Record<string, unknown> = field === 'tokenFile' ? {} : { token: 'static-token' }
      const cluster: Record<string, unknown> = {}
      if (field === 'client-key') user['client-certificate'] = join(dir, 'client.crt')
      if (field === 'certificate-authority') cluster[field] = paths[cls]
      else user[field] = paths[cls]
      const kubeconfig = join(dir, `${field}-${cls}`)
      await writeFile(kubeconfig, kubeconfigText('https://127.0.0.1:1', { cluster, user }))
      const reason = configurationReason(paths[cls], cls, bound)
      refused(
        t,
        await runCli(['check', '--kubeconfig', kubeconfig, OBJECTS]),
        `--kubeconfig ${kubeconfig}: ${owner}: ${field} ${reason}`,
      )
    }
  }
  const paths = await pathsOf(join(dir, 'kubeconfig'), KUBECONFIG_MAX_BYTES)
  for (const cls of CLASSES) {
    const reason = configurationReason(paths[cls], cls, KUBECONFIG_MAX_BYTES)
    refused(t, await runCli(['audit', '--kubeconfig', paths[cls]]), `--kubeconfig ${reason}`)
  }
})

t.test('--crds, --client-ca and the serving pair', async (t) => {
  const dir = t.testdir()
  const crds = await pathsOf(join(dir, 'crds'), OBJECT_FILE_MAX_BYTES)
  for (const cls of CLASSES) {
    const outcome = await runCli(['check', '--crds', crds[cls], OBJECTS])
    if (cls === 'directory') {
      // Read as object paths are: a directory holding no CRD is no catalog.
      refused(
        t,
        outcome,
        `${crds[cls]}: no objects found (reads *.yaml, *.yml, *.json files, recursively)`,
      )
    } else if (cls === 'dangling') {
      refused(
        t,
        outcome,
        `${crds[cls]}: a symbolic link to ${join(dir, 'crds', 'gone')}, which does not exist`,
      )
    } else refused(t, outcome, configurationReason(crds[cls], cls, OBJECT_FILE_MAX_BYTES))
  }
  const ca = await pathsOf(join(dir, 'ca'), 4 * MiB)
  const certDir = join(dir, 'no-certs')
  for (const cls of CLASSES) {
    refused(
      t,
      await serveInProcess(['--cert-dir', certDir, '--client-ca', ca[cls]]),
      `--client-ca ${configurationReason(ca[cls], cls, 4 * MiB)}`,
    )
  }
  const pair = await pathsOf(join(dir, 'pair'), CERTIFICATE_FILE_MAX_BYTES)
  for (const cls of CLASSES) {
    if (cls === 'dangling') continue // a pair not there yet is waited for (cert-manager writes it later)
    const certs = join(dir, `certs-${cls}`)
    await mkdir(certs)
    await symlink(pair[cls], join(certs, 'tls.crt'))
    await writeFile(join(certs, 'tls.key'), 'not read\n')
    const reason = configurationReason(join(certs, 'tls.crt'), cls, CERTIFICATE_FILE_MAX_BYTES)
    refused(t, await serveInProcess(['--cert-dir', certs]), `--cert-dir ${certs}: ${reason}`)
  }
})

t.test('inputs: check, --objects and review files', async (t) => {
  const dir = t.testdir()
  const objects = await pathsOf(join(dir, 'objects'), OBJECT_FILE_MAX_BYTES)
  const review = await pathsOf(join(dir, 'review'), REVIEW_MAX_BYTES)
  const objectReason = (cls: Class): string | undefined => {
    const path = objects[cls]
    switch (cls) {
      case 'device':
        return `${path}: larger than ${OBJECT_FILE_MAX_BYTES / MiB} MiB`
      case 'oversized':
        return `${path}: larger than ${OBJECT_FILE_MAX_BYTES / MiB} MiB (${OBJECT_FILE_MAX_BYTES + 1} bytes)`
      case 'directory':
        return `${path}: no objects found (reads *.yaml, *.yml, *.json files, recursively)`
      case 'dangling':
        return `${path}: a symbolic link to ${join(dir, 'objects', 'gone')}, which does not exist`
      case 'fifo':
        return undefined // read, as a pipe: test/cli/input-signals.test.ts
    }
  }
  for (const cls of CLASSES) {
    const reason = objectReason(cls)
    if (reason === undefined) continue
    refused(t, await runCli(['check', objects[cls]]), reason)
    refused(t, await runCli(['review', '--objects', objects[cls], REVIEW]), `--objects ${reason}`)
  }
  const reviewReasons: Partial<Record<Class, string>> = {
    device: `${review.device}: larger than ${REVIEW_MAX_BYTES / MiB} MiB`,
    oversized: `${review.oversized}: larger than ${REVIEW_MAX_BYTES / MiB} MiB (${REVIEW_MAX_BYTES + 1} bytes)`,
    directory: `${review.directory}: illegal operation on a directory`,
    dangling: `${review.dangling}: no such file or directory`,
  }
  for (const [cls, line] of Object.entries(reviewReasons)) {
    refused(t, await runCli(['review', review[cls as Class]]), line)
  }
})
