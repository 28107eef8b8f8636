/**
 * The Go reader of the YAML differential test (test/e2e/yaml-parity: kubectl's way of reading a
 * manifest, with the modules Kubernetes v1.37 pins), built with the machine's Go and cached
 * outside the repository, keyed by the Go version and a hash of its sources: a changed program
 * or go.mod never reuses a stale build. Its go.sum is kept in the repository, so the build
 * downloads exactly the pinned modules. Run directly (`node test/e2e/harness/yaml-parity.ts`)
 * to build ahead.
 */

import { createHash } from 'node:crypto'
import { copyFile, mkdir, readdir, readFile, rename, rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { cacheRoot, goVersion, isFile, run } from '../control-plane/binaries.ts'

const sourceDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'yaml-parity')

/** The path of the built reader. */
export async function ensureYamlParity(
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<string> {
  const go = await goVersion()
  const sources = (await readdir(sourceDir))
    .filter((name) => name === 'go.mod' || name === 'go.sum' || name.endsWith('.go'))
    .sort()
  const hash = createHash('sha256')
  for (const name of sources) hash.update(name).update(await readFile(join(sourceDir, name)))
  const root = cacheRoot('yaml-parity')
  const dir = join(root, `${go}-${hash.digest('hex').slice(0, 12)}`)
  const binary = join(dir, 'yaml-parity')
  if (await isFile(binary)) {
    log(`e2e: using cached yaml-parity reader from ${dir}`)
    return binary
  }
  log(`e2e: building the yaml-parity reader with ${go}…`)
  const started = Date.now()
  const work = join(dir, 'build')
  await mkdir(work, { recursive: true })
  for (const name of sources) await copyFile(join(sourceDir, name), join(work, name))
  await run('go', ['build', '-trimpath', '-mod=readonly', '-o', `${binary}.tmp`, '.'], work, log, {
    ...process.env,
    CGO_ENABLED: '0',
  })
  await rename(`${binary}.tmp`, binary)
  // Builds of earlier sources for this Go are dead weight.
  for (const stale of await readdir(root)) {
    if (stale.startsWith(`${go}-`) && join(root, stale) !== dir)
      await rm(join(root, stale), { recursive: true, force: true })
  }
  log(
    `e2e: built the yaml-parity reader in ${Math.round((Date.now() - started) / 1000)} s (cached in ${dir})`,
  )
  return binary
}

/** The reader `test/e2e/run.ts` built (E2E_YAML_PARITY), or one built now. */
export async function yamlParityBinary(): Promise<string> {
  const fromRunner = process.env['E2E_YAML_PARITY']
  return fromRunner !== undefined && fromRunner !== '' ? fromRunner : ensureYamlParity()
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  process.stdout.write(`${await ensureYamlParity()}\n`)
}
