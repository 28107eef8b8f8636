// docs/architecture.md#architecture: policy/ is pure and its layers point only down; metrics/
// stands alone. This reads the sources, so a new import cannot slip past review; the layer table is
// the lint rule's own.
import t from 'tap'
import { readdir, readFile } from 'node:fs/promises'
import { join, normalize } from 'node:path'

interface Layer {
  readonly folder: string
  readonly mayImport: readonly string[]
}
// eslint.config.js is plain JavaScript (ESLint loads it without a build), so it is typed here.
const lintConfig: string = '../../eslint.config.js'
const { LAYERS } = (await import(lintConfig)) as { LAYERS: readonly Layer[] }

const FORBIDDEN_MODULES =
  /^(fastify|pino|@kubernetes\/client-node|(node:)?(fs|fs\/promises|net|http|https|tls|child_process|timers|timers\/promises|process|worker_threads))$/

function importsOf(source: string): string[] {
  return [
    ...source.matchAll(/\bfrom\s+'([^']+)'|\bimport\s*\(\s*'([^']+)'|\bimport\s+'([^']+)'/g),
  ].map((m) => m[1] ?? m[2] ?? m[3] ?? '')
}

const within = (path: string, folder: string) => path.startsWith(`${folder}/`)

t.test('every folder of policy/ has a layer, and every layer a file', async (t) => {
  const folders = (await readdir('src/policy', { recursive: true, withFileTypes: true }))
    .filter((e) => e.isDirectory())
    .map((e) => join(e.parentPath, e.name))
  for (const folder of ['src/policy', ...folders]) {
    t.ok(
      LAYERS.some((l) => l.folder === folder),
      `${folder} is in LAYERS`,
    )
  }
})

for (const { folder, mayImport } of LAYERS) {
  t.test(`${folder}/ imports no I/O and only from ${mayImport.join(', ')}`, async (t) => {
    const files = (await readdir(folder)).filter((f) => f.endsWith('.ts'))
    t.ok(files.length > 0, 'the folder holds sources')
    for (const file of files) {
      const source = await readFile(join(folder, file), 'utf8')
      for (const specifier of importsOf(source)) {
        t.notMatch(specifier, FORBIDDEN_MODULES, `${file} imports ${specifier}`)
        if (!specifier.startsWith('.')) continue
        const target = normalize(join(folder, specifier))
        t.ok(
          mayImport.some((allowed) => within(target, allowed)),
          `${folder}/${file} imports ${specifier}`,
        )
      }
      if (folder.startsWith('src/policy')) {
        t.notMatch(
          source,
          /\bprocess\.|\bsetTimeout\(|\bsetInterval\(|\bDate\.now\(/,
          `${file} touches process state or clocks`,
        )
      }
    }
  })
}
