/**
 * Issue 37's proof that the loader reads object files as kubectl does: every file of the corpus
 * (yaml-parity/corpus.ts: hundreds of scalars as values and keys, and whole documents) is read
 * by kubectl's own reading code (yaml-parity/main.go: the modules Kubernetes v1.37 pins, built
 * with the machine's Go) and by the loader. Where kubectl reads the file, the loader must read
 * the same JSON documents; where kubectl refuses it, the loader must refuse it with one line
 * (an ObjectFileError, exit 2 in the CLI). The only differences allowed are the ones a corpus
 * file names as `stricter`: files kubectl reads that the loader refuses on purpose.
 */

import { execFile } from 'node:child_process'
import t from 'tap'
import { ObjectFileError, parseDocuments, parseObjects } from '../../src/cluster/load-objects.ts'
import { yamlParityBinary } from './harness/yaml-parity.ts'
import { documentFiles, scalarFiles } from './yaml-parity/corpus.ts'
import type { CorpusFile } from './yaml-parity/corpus.ts'

interface GoResult {
  readonly name: string
  readonly documents: readonly string[] | null
  readonly error?: string
}

/** The Go reader's verdict on each file. */
async function readWithKubectl(files: readonly CorpusFile[]): Promise<GoResult[]> {
  const binary = await yamlParityBinary()
  const input = JSON.stringify(
    files.map(({ name, content }) => ({ name, base64: Buffer.from(content).toString('base64') })),
  )
  return new Promise((resolve, reject) => {
    const child = execFile(binary, { maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${binary}: ${error.message}\n${stderr}`))
      else resolve(JSON.parse(stdout) as GoResult[])
    })
    child.stdin?.end(input)
  })
}

/** JSON with object keys sorted, so documents compare whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  )
}

type Ours = { readonly documents: unknown[] } | { readonly refused: string }

function readWithLoader(file: CorpusFile): Ours {
  try {
    const documents = parseDocuments(file.content, 'corpus.yaml')
    parseObjects(file.content, 'corpus.yaml') // the objects' own checks (kind, name, Lists)
    return { documents }
  } catch (error) {
    if (error instanceof ObjectFileError) return { refused: error.message }
    throw new Error(`${file.name}: not an ObjectFileError: ${String(error)}`, { cause: error })
  }
}

const scalars = scalarFiles()
const documents = documentFiles()

t.test('the loader reads every corpus file as kubectl does', async (t) => {
  const files = [...scalars, ...documents]
  t.ok(scalars.length >= 300, `${scalars.length} scalar files`)
  t.ok(documents.length >= 50, `${documents.length} document files`)
  const results = await readWithKubectl(files)
  t.equal(results.length, files.length)
  const tally = { same: 0, refusedByBoth: 0, stricter: 0, differ: 0 }
  files.forEach((file, i) => {
    const go = results[i]
    const ours = readWithLoader(file)
    const goRefuses = go?.error !== undefined
    if (file.stricter !== undefined) {
      // kubectl reads it; the loader refuses it on purpose, saying why.
      const ok =
        !goRefuses &&
        'refused' in ours &&
        file.stricter.test(ours.refused) &&
        !/\n/.test(ours.refused)
      if (ok) tally.stricter++
      else tally.differ++
      t.ok(ok, `${file.name}: stricter on purpose`, { kubectl: go, ours })
      return
    }
    if (goRefuses) {
      const ok = 'refused' in ours && !/\n/.test(ours.refused)
      if (ok) tally.refusedByBoth++
      else tally.differ++
      t.ok(ok, `${file.name}: refused as kubectl refuses it`, { kubectl: go.error, ours })
      return
    }
    const expected = (go?.documents ?? []).map((document) => canonical(JSON.parse(document)))
    const actual = 'documents' in ours ? ours.documents.map(canonical) : ours
    const ok = Array.isArray(actual) && canonical(actual) === canonical(expected)
    if (ok) tally.same++
    else tally.differ++
    t.ok(ok, `${file.name}: read as kubectl reads it`, { kubectl: expected, ours: actual })
  })
  t.comment(
    `${files.length} files (${scalars.length} scalar, ${documents.length} document): ${tally.same} read the same, ${tally.refusedByBoth} refused by both, ${tally.stricter} refused on purpose, ${tally.differ} different`,
  )
  t.equal(tally.differ, 0, 'no file read differently')
})
