import t from 'tap'
import { changeMeanings } from '../../src/policy/change-meanings.ts'

const POD = '/spec/template/metadata/annotations'

t.test('each invariant a patch restores is named, missing or wrong', async (t) => {
  t.same(
    changeMeanings({ op: 'replace', path: `${POD}/toolhive.stacklok.dev~1runconfig-checksum` }),
    ['RunConfig checksum stale: pods did not roll after the RunConfig changed'],
  )
  t.same(changeMeanings({ op: 'add', path: `${POD}/toolhive.stacklok.dev~1runconfig-checksum` }), [
    'RunConfig checksum missing: pods will not roll when the RunConfig changes',
  ])
  t.same(
    changeMeanings({ op: 'replace', path: `${POD}/toolhive.stacklok.dev~1mcpserver-generation` }),
    ['MCPServer generation stale: pods did not roll after the MCPServer changed'],
  )
  t.same(changeMeanings({ op: 'replace', path: '/spec/replicas', value: 1 }), [
    'stdio server above one replica: a stdio server runs exactly one',
  ])
  t.same(changeMeanings({ op: 'remove', path: '/spec/template/spec/containers/0/env/3' }), [
    "THV_MCPSERVER_GENERATION not read from the pod's own generation annotation: old and new pods may race",
  ])
  t.same(changeMeanings({ op: 'add', path: '/spec/template/spec/containers/0/env/-', value: {} }), [
    'THV_MCPSERVER_GENERATION missing: the proxy does not read its generation',
  ])
  t.same(
    changeMeanings({
      op: 'replace',
      path: '/metadata/annotations/toolhive.stacklok.dev~1content-checksum',
    }),
    ['content checksum stale: it does not match the RunConfig'],
  )
})

t.test('a map added whole restores what it holds, and only that', async (t) => {
  const both = {
    'toolhive.stacklok.dev/runconfig-checksum': 'abc',
    'toolhive.stacklok.dev/mcpserver-generation': '2',
  }
  t.same(changeMeanings({ op: 'add', path: POD, value: both }), [
    'RunConfig checksum missing: pods will not roll when the RunConfig changes',
    'MCPServer generation missing: the proxy cannot tell which generation it runs',
  ])
  const checksumOnly = { 'toolhive.stacklok.dev/runconfig-checksum': 'abc' }
  t.same(changeMeanings({ op: 'add', path: POD, value: checksumOnly }), [
    'RunConfig checksum missing: pods will not roll when the RunConfig changes',
  ])
  const env = { containers: [{ name: 'toolhive', env: [{ name: 'X' }] }] }
  t.same(changeMeanings({ op: 'add', path: '/spec/template/spec', value: env }), [
    'THV_MCPSERVER_GENERATION missing: the proxy does not read its generation',
  ])
})

t.test('a change no rule is known to make is described as it is', async (t) => {
  t.same(changeMeanings({ op: 'add', path: '/metadata/labels/x' }), ['add /metadata/labels/x'])
  t.same(changeMeanings({ op: 'add', path: POD, value: { other: 'x' } }), [`add ${POD}`])
})
