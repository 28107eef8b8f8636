/**
 * Every policy over near-valid and arbitrary objects of its kind, with a fixed seed and a bounded
 * number of inputs (the properties are in policy-properties.ts; `npm run fuzz` runs them longer).
 */

import { createHash } from 'node:crypto'
import t from 'tap'
import { trimForView } from '../../src/cluster/trim.ts'
import { podVolumesCanonical, podVolumesHash } from '../../src/policy/pod-volumes.ts'
import { POLICY_PROPERTIES } from './policy-properties.ts'
import { TEST_SEED, runProperty } from './property.ts'

for (const fuzz of POLICY_PROPERTIES) {
  t.test(fuzz.name, async (t) => {
    const started = performance.now()
    const run = await runProperty(fuzz, { seed: TEST_SEED, numRuns: fuzz.runs })
    t.comment(`${run.inputs} inputs in ${Math.round(performance.now() - started)} ms`)
    if (run.failure) t.fail(run.failure)
    else t.equal(run.inputs, fuzz.runs, 'every input held')
  })
}

t.test('trimForView is idempotent for ConfigMaps whose checksum cannot be computed', async (t) => {
  const object = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'demo', labels: { 'toolhive.stacklok.io/component': 'run-config' } },
    data: '',
  }
  const once = trimForView('ConfigMap', object)
  t.same(trimForView('ConfigMap', once), once, 'trimming again changes nothing')
})

t.test('podVolumesHash is SHA-256 of the canonical form whatever was hashed before', async (t) => {
  const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')
  const mounts = [{ name: 'v', mountPath: '/x' }]
  const record = { containers: [{ name: 'c', volumeMounts: mounts, volumeDevices: null }] }
  const array = { containers: [['c', mounts, null]] }
  t.not(podVolumesCanonical(record), podVolumesCanonical(array), 'the canonical forms differ')
  podVolumesHash(record)
  t.equal(podVolumesHash(array), sha256(podVolumesCanonical(array)), 'the hash of the second')
})
