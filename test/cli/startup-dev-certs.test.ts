/**
 * Development certificates for the embedded default: generated into a missing directory (created
 * alone, mode 0700), an empty one, or one holding only placeholders (the repository's own
 * certs/README.md on a fresh clone); a complete pair is used as it is. A directory holding part of
 * them gets what is missing (startup-dev-certs-regenerate.test.ts); other files stop it, with nothing written.
 */

import { execFileSync } from 'node:child_process'
import { readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { ensureDevCertificates } from '../../src/http/dev-cert-dir.ts'

const REPO = fileURLToPath(new URL('../../', import.meta.url))

const FILES = ['ca.crt', 'tls.crt', 'tls.key']
const WRITTEN = ['ca.crt', 'tls.key', 'tls.crt']

t.test('a missing directory is created alone, owner-only, and filled', async (t) => {
  const dir = join(t.testdir(), 'certs')
  t.same(await ensureDevCertificates(dir), { created: true, written: WRITTEN })
  t.equal((await stat(dir)).mode & 0o777, 0o700, 'mode 0700')
  t.same((await readdir(dir)).sort(), FILES)
  t.equal((await stat(join(dir, 'tls.key'))).mode & 0o777, 0o600, 'the key is owner-only')
})

t.test('an empty directory is filled; a second start keeps the pair', async (t) => {
  const dir = t.testdir()
  t.same(await ensureDevCertificates(dir), { created: true, written: WRITTEN })
  const cert = await readFile(join(dir, 'tls.crt'), 'utf8')
  t.same(await ensureDevCertificates(dir), { created: false, written: [] })
  t.equal(await readFile(join(dir, 'tls.crt'), 'utf8'), cert, 'not regenerated')
})

t.test('placeholders alone do not stop generation, and are kept as they were', async (t) => {
  // What a fresh clone holds in certs/ (git ls-files), then the other placeholders allowed.
  const tracked = execFileSync('git', ['ls-files', 'certs'], { cwd: REPO, encoding: 'utf8' })
    .split('\n')
    .filter((path) => path !== '')
    .map((path) => path.slice('certs/'.length))
  const cases: Record<string, string>[] = [
    Object.fromEntries(tracked.map((name) => [name, `tracked ${name}`])),
    { 'README.md': 'notes' },
    { '.gitkeep': '' },
    { 'README.md': 'notes', '.keep': '' },
  ]
  for (const files of cases) {
    const dir = t.testdir(files)
    t.same(
      await ensureDevCertificates(dir),
      { created: true, written: WRITTEN },
      Object.keys(files).join(', '),
    )
    t.same((await readdir(dir)).sort(), [...FILES, ...Object.keys(files)].sort())
    for (const [name, content] of Object.entries(files)) {
      t.equal(await readFile(join(dir, name), 'utf8'), content, `${name} untouched`)
    }
  }
})

t.test('a pair of the user without ca.crt is used as it is', async (t) => {
  const dir = t.testdir({ 'tls.crt': 'mine', 'tls.key': 'mine too' })
  t.same(await ensureDevCertificates(dir), { created: false, written: [] })
  t.same((await readdir(dir)).sort(), ['tls.crt', 'tls.key'], 'nothing added')
})

t.test('a directory of other files is not written into', async (t) => {
  for (const files of [{ 'notes.txt': 'mine' }, { 'README.md': 'x', 'server.pem': 'mine' }]) {
    const dir = t.testdir(files)
    await t.rejects(ensureDevCertificates(dir), {
      name: 'StartupProblem',
      setting: 'certDir',
      reason: /^holds other files but no tls\.crt or tls\.key/,
    })
    t.same((await readdir(dir)).sort(), Object.keys(files).sort())
  }
})

t.test('a missing parent is not created', async (t) => {
  const root = t.testdir()
  await t.rejects(ensureDevCertificates(join(root, 'a', 'certs')), {
    name: 'StartupProblem',
    setting: 'certDir',
    reason: `no such directory ${join(root, 'a')} (only the last directory of the path is created)`,
  })
  t.same(await readdir(root), [], 'nothing created')
  await writeFile(join(root, 'file'), '')
  await t.rejects(ensureDevCertificates(join(root, 'file')), {
    name: 'StartupProblem',
    setting: 'certDir',
    reason: 'not a directory',
  })
})

t.test('a dangling symbolic link is named as one, never "file already exists"', async (t) => {
  const root = t.testdir()
  const nowhere = join(root, 'nowhere')
  // The directory itself: before, mkdir failed on the link with EEXIST.
  const linkedDir = join(root, 'certs')
  await symlink(nowhere, linkedDir)
  await t.rejects(ensureDevCertificates(linkedDir), {
    name: 'StartupProblem',
    setting: 'certDir',
    value: linkedDir,
    reason: `is a dangling symbolic link (to ${nowhere}): remove it or restore its target`,
  })
  t.same((await readdir(root)).sort(), ['certs'], 'nothing created, the link kept')
  // A file of the pair, or the CA: before, taken for a present file (or a missing one).
  const cases: [Record<string, string>, string][] = [
    [{}, 'tls.key'],
    [{ 'tls.crt': 'mine' }, 'tls.key'],
    [{ 'tls.key': 'mine' }, 'tls.crt'],
    [{}, 'ca.crt'],
  ]
  for (const [files, link] of cases) {
    const dir = t.testdir(files)
    await symlink(nowhere, join(dir, link))
    await t.rejects(
      ensureDevCertificates(dir),
      {
        name: 'StartupProblem',
        setting: 'certDir',
        value: dir,
        reason: `${link} is a dangling symbolic link (to ${nowhere}): remove it or restore its target`,
      },
      `${link} beside ${Object.keys(files).join(', ') || 'nothing'}`,
    )
    t.same((await readdir(dir)).sort(), [...Object.keys(files), link].sort(), 'nothing written')
  }
})
