/**
 * Every policy over near-valid and arbitrary objects of its kind, with a fixed seed and a bounded
 * number of inputs (the properties are in policy-properties.ts; `npm run fuzz` runs them longer).
 */

import t from 'tap'
import { trimForView } from '../../src/cluster/trim.ts'
import { POLICY_PROPERTIES } from './policy-properties.ts'
import { testProperties } from './bounded.ts'

testProperties(POLICY_PROPERTIES, 'every input held')

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
