// DESIGN §2: policy/ is pure. This reads the sources, so a new import cannot slip past review.
import t from 'tap'
import { readdir, readFile } from 'node:fs/promises'
import { dirname, join, normalize, relative } from 'node:path'

const POLICY_DIR = 'src/policy'
const FORBIDDEN_MODULES =
  /^(fastify|pino|@kubernetes\/client-node|(node:)?(fs|fs\/promises|net|http|https|tls|child_process|timers|timers\/promises|process|worker_threads))$/

t.test('policy/ imports no framework, client, logger, file system or process module', async (t) => {
  const files = (await readdir(POLICY_DIR, { recursive: true })).filter((f) => f.endsWith('.ts'))
  t.ok(files.length > 0)
  t.ok(
    files.some((f) => f.includes('/')),
    'the sub-folders (messages/, …) are read too',
  )
  for (const file of files) {
    const source = await readFile(join(POLICY_DIR, file), 'utf8')
    const specifiers = [
      ...source.matchAll(/\bfrom\s+'([^']+)'|\bimport\s*\(\s*'([^']+)'|\bimport\s+'([^']+)'/g),
    ].map((m) => m[1] ?? m[2] ?? m[3] ?? '')
    for (const specifier of specifiers) {
      t.notMatch(specifier, FORBIDDEN_MODULES, `${file} imports ${specifier}`)
      if (specifier.startsWith('.')) {
        const target = relative(POLICY_DIR, normalize(join(POLICY_DIR, dirname(file), specifier)))
        t.notMatch(target, /^\.\./, `${file} imports only from policy/: ${specifier}`)
      }
    }
    t.notMatch(
      source,
      /\bprocess\.|\bsetTimeout\(|\bsetInterval\(|\bDate\.now\(/,
      `${file} touches process state or clocks`,
    )
  }
})
