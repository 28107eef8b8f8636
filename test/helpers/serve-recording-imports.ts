/**
 * Child-process script for the import tests: records every module resolved under
 * `@kubernetes/client-node` or `@bufbuild` (the CEL engine of `check --crds`), starts `serve` in-process with the arguments and environment it is
 * given (the service account directory in SERVICE_ACCOUNT_DIR), stops it at once, and prints
 * `{ code, started, stderr, loaded }` as JSON. The hook is registered before the service's first
 * module is imported, so nothing it loads escapes it.
 */

import { registerHooks } from 'node:module'
import { PassThrough, Readable } from 'node:stream'

const loaded: string[] = []
registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context)
    if (/\/node_modules\/(@kubernetes\/client-node|@bufbuild)\//.test(resolved.url))
      loaded.push(resolved.url)
    return resolved
  },
})

const { run } = await import('../../src/cli/program.ts')
const stderr = new PassThrough()
const errors: string[] = []
stderr.on('data', (chunk: Buffer) => errors.push(chunk.toString('utf8')))
let started = false
const serviceAccountDir = process.env['SERVICE_ACCOUNT_DIR']
const code = await run(process.argv.slice(2), {
  stdout: new PassThrough().resume(),
  stderr,
  stdin: Readable.from(['']),
  env: process.env,
  runUntilSignal: (close) => {
    started = true
    void close()
  },
  ...(serviceAccountDir === undefined ? {} : { serviceAccountDir }),
})
process.stdout.write(JSON.stringify({ code, started, stderr: errors.join(''), loaded }))
