/**
 * `check` on directories as CI runs it: what a directory yields (recursion, links, a mounted
 * ConfigMap), and a path that yields nothing or does not exist ends with exit 2 and one line,
 * never with "0 admitted, 0 denied" and exit 0.
 */

import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import type { Test } from 'tap'
import { runCli } from '../helpers/cli.ts'

const SAMPLES = fileURLToPath(new URL('../../samples/objects', import.meta.url))

/** A fresh directory for one test's files, removed when the test ends. */
async function tempDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'files-cli-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

const service = (name: string): string =>
  `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}}\n`

t.test('check reads a mounted ConfigMap volume: each object once', async (t) => {
  // Every file a link into ..data, a link to the timestamped directory: nothing was read.
  const volume = await tempDir(t)
  const version = '..2026_11_23_10_00_00.123'
  await mkdir(join(volume, version))
  await writeFile(join(volume, version, 'web.yaml'), service('web'))
  await writeFile(join(volume, version, 'API.YAML'), service('api'))
  await symlink(version, join(volume, '..data'))
  await symlink('..data/web.yaml', join(volume, 'web.yaml'))
  await symlink('..data/API.YAML', join(volume, 'API.YAML'))
  const result = await runCli(['check', volume])
  t.equal(result.code, 0, result.stderr)
  t.equal(
    result.stdout,
    [
      'unchecked Service default/api: no rule of mcp-admission and no CRD given applies to its kind',
      'unchecked Service default/web: no rule of mcp-admission and no CRD given applies to its kind',
      '0 admitted (0 mutated), 0 denied, 2 not checked\n',
    ].join('\n'),
  )
})

t.test('check reads subdirectories and linked directories', async (t) => {
  const dir = await tempDir(t)
  const shared = await tempDir(t)
  await mkdir(join(dir, 'base'))
  await writeFile(join(dir, 'base', 'svc.yml'), service('in-subdirectory'))
  await writeFile(
    join(shared, 'svc.json'),
    JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'linked' } }),
  )
  await symlink(shared, join(dir, 'shared'))
  const result = await runCli(['check', dir])
  t.equal(result.code, 0, result.stderr)
  t.match(result.stdout, /unchecked Service default\/in-subdirectory/)
  t.match(result.stdout, /unchecked Service default\/linked/)
  t.match(result.stdout, /0 admitted \(0 mutated\), 0 denied, 2 not checked\n$/)
})

t.test('a directory with no object files: exit 2, one line, nothing checked', async (t) => {
  const dir = join(await tempDir(t), 'empty')
  await mkdir(dir)
  await writeFile(join(dir, 'notes.txt'), 'kind: Service\n')
  t.same(await runCli(['check', dir]), {
    code: 2,
    stdout: '',
    stderr: `mcp-admission: ${dir}: no objects found (reads *.yaml, *.yml, *.json files, recursively)\n`,
  })
})

t.test('the README command with a path that does not exist: exit 2, one line', async (t) => {
  const missing = join(await tempDir(t), 'my-manifests/')
  t.same(await runCli(['check', '-o', 'yaml', '--objects', SAMPLES, missing]), {
    code: 2,
    stdout: '',
    stderr: `mcp-admission: ${missing}: no such file or directory\n`,
  })
  // The same for --objects (which the line names), and for review's own file.
  t.match(await runCli(['check', '--objects', missing, SAMPLES]), {
    code: 2,
    stderr: `mcp-admission: --objects ${missing}: no such file or directory\n`,
  })
  const review = join(missing, 'review.json')
  t.same(await runCli(['review', review]), {
    code: 2,
    stdout: '',
    stderr: `mcp-admission: ${review}: no such file or directory\n`,
  })
})

t.test('check --help says what a directory yields', async (t) => {
  const { code, stdout } = await runCli(['check', '--help'])
  t.equal(code, 0)
  for (const text of [
    '*.yaml, *.yml, *.json files',
    'extensions in any case',
    'recursively',
    'Symbolic links are followed',
    'Hidden entries are read, except names that\n  start with ".."',
    'yields no object is an error (exit 2)',
  ]) {
    t.ok(stdout.includes(text), text)
  }
  t.match((await runCli(['review', '--help'])).stdout, /Symbolic links are followed/)
})

t.test('a dangling symbolic link is named as one, given or met in a directory', async (t) => {
  const dir = await tempDir(t)
  const gone = join(dir, 'gone.yaml')
  await symlink(gone, join(dir, 'link.yaml'))
  t.same(await runCli(['check', join(dir, 'link.yaml')]), {
    code: 2,
    stdout: '',
    stderr: `mcp-admission: ${join(dir, 'link.yaml')}: a symbolic link to ${gone}, which does not exist\n`,
  })
  t.same(await runCli(['check', dir]), {
    code: 2,
    stdout: '',
    stderr: `mcp-admission: ${join(dir, 'link.yaml')}: a symbolic link to ${gone}, which does not exist\n`,
  })
})
