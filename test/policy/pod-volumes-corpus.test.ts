// Pins the bytes of the pod volumes fingerprint (DESIGN §4.3) with literal specs: a change to any
// canonical text changes the hash stamped on every proxy Deployment, and so rolls every proxy pod on
// upgrade. The expected values in the corpus were written by the implementation of issue 18's
// start; a rewrite must reproduce them byte for byte. Literal specs rather than generated samples,
// so a fast-check upgrade cannot move the goal posts.
import t from 'tap'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import {
  KNOWN_PROJECTION_SOURCES,
  KNOWN_VOLUME_SOURCES,
  podVolumesCanonical,
  podVolumesHash,
} from '../../src/policy/pod-volumes.ts'
import { isRecord } from '../../src/policy/kube.ts'

interface CorpusEntry {
  readonly name: string
  readonly spec: unknown
  readonly canonical: string
  readonly digest: string
}

const CORPUS_URL = new URL('./fixtures/pod-volumes-corpus.json', import.meta.url)

function isCorpusEntry(value: unknown): value is CorpusEntry {
  return (
    isRecord(value) &&
    typeof value.name === 'string' &&
    Object.hasOwn(value, 'spec') &&
    typeof value.canonical === 'string' &&
    typeof value.digest === 'string'
  )
}

/** JSON.parse keeps a `"__proto__"` key as an own property, as the API server's JSON would. */
function loadCorpus(): CorpusEntry[] {
  const parsed: unknown = JSON.parse(readFileSync(CORPUS_URL, 'utf8'))
  if (!Array.isArray(parsed) || !parsed.every(isCorpusEntry)) {
    throw new Error(`${CORPUS_URL.pathname}: not a list of {name, spec, canonical, digest}`)
  }
  return parsed
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex')
}

/** The records of `list`, or none when it is not a list. */
function recordsOf(list: unknown): Record<string, unknown>[] {
  return Array.isArray(list) ? list.filter(isRecord) : []
}

const corpus = loadCorpus()

t.test('the corpus is well formed', async (t) => {
  t.ok(corpus.length >= 60, `${corpus.length} entries`)
  const names = corpus.map((entry) => entry.name)
  t.same([...new Set(names)], names, 'entry names are unique')
  for (const entry of corpus) {
    t.equal(sha256(entry.canonical), entry.digest, `${entry.name}: digest is of its canonical text`)
  }
})

t.test('every entry gives its pinned canonical text and digest', async (t) => {
  for (const entry of corpus) {
    t.equal(podVolumesCanonical(entry.spec), entry.canonical, `${entry.name}: canonical text`)
    t.equal(podVolumesHash(entry.spec), entry.digest, `${entry.name}: digest`)
  }
})

t.test('the corpus covers every source type of the rule table', async (t) => {
  const volumeTypes = new Set<string>()
  const projectionTypes = new Set<string>()
  for (const entry of corpus) {
    const spec = isRecord(entry.spec) ? entry.spec : {}
    for (const volume of recordsOf(spec.volumes)) {
      for (const key of Object.keys(volume)) volumeTypes.add(key)
      const projected = volume.projected
      for (const source of recordsOf(isRecord(projected) ? projected.sources : undefined)) {
        for (const key of Object.keys(source)) projectionTypes.add(key)
      }
    }
  }
  for (const type of KNOWN_VOLUME_SOURCES) t.ok(volumeTypes.has(type), `volume source ${type}`)
  for (const type of KNOWN_PROJECTION_SOURCES) {
    t.ok(projectionTypes.has(type), `projected source ${type}`)
  }
})
