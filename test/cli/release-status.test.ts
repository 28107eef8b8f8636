// `mcp-admission release-status` against a fake API server that serves discovery, paged lists of
// VirtualMCPCompositeToolDefinitions with their managedFields, and merge patches of their status
// (conditional on resourceVersion; removed fields leave every manager's managedFields, as the API
// server does it): what the reconciler alone wrote is removed, nothing else is touched, and a
// second run finds nothing.

import { createServer } from 'node:http'
import { join } from 'node:path'
import t from 'tap'
import type { Test } from 'tap'
import { VIEW_RESOURCES } from '../../src/cluster/resources.ts'
import type { ViewResource } from '../../src/cluster/resources.ts'
import { runCli } from '../helpers/cli.ts'
import { discoveryAnswer } from '../helpers/discovery-documents.ts'

type Any = Record<string, any>

const OURS = 'mcp-admission-status'
const GROUP = '/apis/toolhive.stacklok.dev'
const COLLECTION = 'virtualmcpcompositetooldefinitions'

interface Patch {
  readonly path: string
  readonly query: Record<string, string>
  readonly contentType: string | undefined
  readonly body: Any
}

interface FakeCluster {
  readonly server: string
  /** The stored definitions, by `namespace/name`; applies change them. */
  readonly objects: Map<string, Any>
  readonly patches: Patch[]
  /** `namespace/name` → the answer a patch of it is refused with. */
  readonly refusedWrites: Map<string, { status: number; body: Any }>
  /** Status the list is refused with, if any. */
  refusedList?: number
}

/** A definition stored with `status`, whose fields `owners` (manager → fields) set. */
function definition(
  namespace: string,
  name: string,
  status: Any = {},
  owners: Record<string, string[]> = {},
): Any {
  return {
    apiVersion: 'toolhive.stacklok.dev/v1beta1',
    kind: 'VirtualMCPCompositeToolDefinition',
    metadata: {
      name,
      namespace,
      resourceVersion: '7',
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          fieldsV1: { 'f:spec': { 'f:name': {}, 'f:steps': {} } },
        },
        ...Object.entries(owners).map(([manager, fields]) => ({
          manager,
          operation: manager === OURS ? 'Apply' : 'Update',
          subresource: 'status',
          fieldsV1: { 'f:status': Object.fromEntries(fields.map((f) => [`f:${f}`, {}])) },
        })),
      ],
    },
    spec: { name, description: 'd', steps: [{ id: 'a', tool: 'github.get_issue' }] },
    status: structuredClone(status),
  }
}

const INVALID = { validationStatus: 'Invalid', validationErrors: ['spec.steps[1].id: Duplicate'] }

/**
 * A merge patch of the status, as the API server does it: refused with 409 when the object changed
 * since `metadata.resourceVersion`; a null removes the field, from managedFields too.
 */
function mergePatchStatus(object: Any, patch: Any): { status: number; body: unknown } {
  if (patch.metadata?.resourceVersion !== object.metadata.resourceVersion)
    return { status: 409, body: { kind: 'Status', reason: 'Conflict' } }
  for (const [field, value] of Object.entries(patch.status as Any)) {
    if (value !== null) throw new Error('the fake removes fields only')
    Reflect.deleteProperty(object.status as object, field)
    for (const entry of object.metadata.managedFields as Any[])
      Reflect.deleteProperty(entry.fieldsV1?.['f:status'] ?? {}, `f:${field}`)
  }
  object.metadata.managedFields = (object.metadata.managedFields as Any[]).filter(
    (entry) => entry.subresource !== 'status' || Object.keys(entry.fieldsV1['f:status']).length > 0,
  )
  object.metadata.resourceVersion = String(Number(object.metadata.resourceVersion) + 1)
  return { status: 200, body: object }
}

/** The fake API server's answer to one request. */
function answer(
  fake: FakeCluster,
  resources: readonly ViewResource[],
  request: { method?: string; url: URL; contentType?: string; body: Buffer },
): { status: number; body: unknown } {
  const { method, url } = request
  const discovery = discoveryAnswer(resources, url.pathname)
  if (discovery) return discovery
  const query = Object.fromEntries(url.searchParams)
  if (method === 'GET' && url.pathname === `${GROUP}/v1beta1/${COLLECTION}`) {
    if (fake.refusedList !== undefined)
      return {
        status: fake.refusedList,
        body: { kind: 'Status', message: `${COLLECTION} is forbidden` },
      }
    // Pages of one object, so a run reads across pages; items without apiVersion and kind.
    const all = [...fake.objects.values()]
    const start = Number(query['continue'] ?? 0)
    const next = start + 1
    const items = all.slice(start, next).map((object) => {
      const item = { ...object }
      delete item['apiVersion']
      delete item['kind']
      return item
    })
    const metadata = next < all.length ? { continue: String(next) } : {}
    return { status: 200, body: { kind: 'List', metadata, items } }
  }
  const match = new RegExp(
    `^${GROUP}/v1beta1/namespaces/([^/]+)/${COLLECTION}/([^/]+)/status$`,
  ).exec(url.pathname)
  if (method !== 'PATCH' || !match) return { status: 404, body: { kind: 'Status', code: 404 } }
  const id = `${match[1]}/${match[2]}`
  const body = JSON.parse(request.body.toString('utf8')) as Any
  fake.patches.push({ path: url.pathname, query, contentType: request.contentType, body })
  const refused = fake.refusedWrites.get(id)
  if (refused !== undefined) return refused
  const object = fake.objects.get(id)
  if (!object) return { status: 404, body: { kind: 'Status', code: 404 } }
  return mergePatchStatus(object, body)
}

async function fakeCluster(t: Test, resources: readonly ViewResource[] = VIEW_RESOURCES) {
  const fake: FakeCluster = {
    server: '',
    objects: new Map(),
    patches: [],
    refusedWrites: new Map(),
  }
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://fake')
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const { status, body } = answer(fake, resources, {
        ...(request.method === undefined ? {} : { method: request.method }),
        url,
        ...(request.headers['content-type'] === undefined
          ? {}
          : { contentType: request.headers['content-type'] }),
        body: Buffer.concat(chunks),
      })
      response.setHeader('content-type', 'application/json')
      response.statusCode = status
      response.end(JSON.stringify(body))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  const { port } = server.address() as { port: number }
  return Object.assign(fake, { server: `http://127.0.0.1:${port}` })
}

function kubeconfigFile(t: Test, server: string): string {
  const dir = t.testdir({
    kubeconfig: JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'u', user: { token: 'jwt' } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  })
  return join(dir, 'kubeconfig')
}

const put = (fake: FakeCluster, object: Any) => {
  fake.objects.set(`${object.metadata.namespace}/${object.metadata.name}`, object)
}

t.test('removes the validationStatus it wrote, in every namespace, and nothing else', async (t) => {
  const fake = await fakeCluster(t)
  put(
    fake,
    definition('team', 'ours', INVALID, { [OURS]: ['validationStatus', 'validationErrors'] }),
  )
  put(fake, definition('team', 'theirs', INVALID, { 'ci-validator': ['validationStatus'] }))
  put(fake, definition('team', 'clean'))
  put(
    fake,
    definition('other', 'ours-too', INVALID, { [OURS]: ['validationStatus', 'validationErrors'] }),
  )
  // Both wrote the same verdict: it is also theirs, so it stays.
  put(
    fake,
    definition('other', 'shared', INVALID, {
      [OURS]: ['validationStatus', 'validationErrors'],
      'ci-validator': ['validationStatus'],
    }),
  )
  const kubeconfig = kubeconfigFile(t, fake.server)

  const result = await runCli(['release-status', '--kubeconfig', kubeconfig])
  t.equal(result.code, 0)
  t.equal(result.stderr, '')
  t.equal(
    result.stdout,
    [
      'released VirtualMCPCompositeToolDefinition team/ours',
      'released VirtualMCPCompositeToolDefinition other/ours-too',
      'released 2 objects (5 checked)',
      '',
    ].join('\n'),
  )
  t.same(
    fake.patches.map((p) => p.path),
    [
      `${GROUP}/v1beta1/namespaces/team/${COLLECTION}/ours/status`,
      `${GROUP}/v1beta1/namespaces/other/${COLLECTION}/ours-too/status`,
    ],
  )
  for (const patch of fake.patches) {
    t.same(patch.query, { fieldManager: OURS }, 'its own field manager, no force')
    t.equal(patch.contentType, 'application/merge-patch+json')
    t.same(
      patch.body,
      {
        metadata: { resourceVersion: '7' },
        status: { validationStatus: null, validationErrors: null },
      },
      'the verdict removed, as listed: a change since the list is refused',
    )
  }
  t.same(fake.objects.get('team/ours')?.status, {})
  t.same(fake.objects.get('team/theirs')?.status, INVALID, "another writer's verdict stays")
  t.same(
    fake.objects.get('other/shared')?.status,
    INVALID,
    'a value another manager also set stays',
  )

  // Idempotent: nothing of ours is left.
  const again = await runCli(['release-status', '--kubeconfig', kubeconfig])
  t.equal(again.code, 0)
  t.equal(
    again.stdout,
    'nothing to release: no validationStatus written by mcp-admission-status (5 objects checked)\n',
  )
  t.equal(fake.patches.length, 2, 'no further write')
})

t.test('a write that fails is one line, the rest go on, exit 1', async (t) => {
  const fake = await fakeCluster(t)
  for (const name of ['a', 'b', 'c'])
    put(fake, definition('team', name, INVALID, { [OURS]: ['validationStatus'] }))
  fake.refusedWrites.set('team/a', { status: 403, body: { kind: 'Status', message: 'forbidden' } })
  const cause = { type: 'FieldManagerConflict', field: '.status.validationStatus' }
  fake.refusedWrites.set('team/c', {
    status: 409,
    body: { kind: 'Status', details: { causes: [cause] } },
  })
  const result = await runCli(['release-status', '--kubeconfig', kubeconfigFile(t, fake.server)])
  t.equal(result.code, 1)
  t.equal(
    result.stderr,
    [
      'mcp-admission: cannot release VirtualMCPCompositeToolDefinition team/a: 403 forbidden',
      'mcp-admission: cannot release VirtualMCPCompositeToolDefinition team/c: conflict on .status.validationStatus',
      '',
    ].join('\n'),
  )
  t.equal(
    result.stdout,
    'released VirtualMCPCompositeToolDefinition team/b\nreleased 1 object, 2 failed (3 checked)\n',
  )
})

t.test('deleted between the list and the write: nothing left to release', async (t) => {
  const fake = await fakeCluster(t)
  const gone = definition('team', 'gone', INVALID, { [OURS]: ['validationStatus'] })
  put(fake, gone)
  // The list still shows it; the write finds it gone.
  fake.objects.delete('team/gone')
  fake.objects.set('listed-only', gone)
  // Without a name there is nothing to address a write to.
  const nameless = definition('team', 'x', INVALID, { [OURS]: ['validationStatus'] })
  delete nameless.metadata.name
  fake.objects.set('nameless', nameless)
  const result = await runCli(['release-status', '--kubeconfig', kubeconfigFile(t, fake.server)])
  t.equal(result.code, 0)
  t.match(result.stdout, /^nothing to release: .* \(2 objects checked\)\n$/)
})

t.test('a cluster that cannot be used is one line and exit 2', async (t) => {
  const fake = await fakeCluster(t)
  fake.refusedList = 403
  const listed = await runCli(['release-status', '--kubeconfig', kubeconfigFile(t, fake.server)])
  t.equal(listed.code, 2)
  t.match(
    listed.stderr,
    new RegExp(
      `^mcp-admission: cannot list ${COLLECTION} from ${fake.server}: 403 [^\\n]*forbidden[^\\n]*\\n$`,
    ),
  )
  t.equal(listed.stdout, '')

  const down = await runCli([
    'release-status',
    '--kubeconfig',
    kubeconfigFile(t, 'http://127.0.0.1:1'),
  ])
  t.equal(down.code, 2)
  t.match(down.stderr, /^mcp-admission: cannot read API discovery from http:\/\/127\.0\.0\.1:1: /)

  const none = await runCli(['release-status'])
  t.equal(none.code, 2)
  t.equal(
    none.stderr,
    'mcp-admission: release-status needs a cluster: --kubeconfig FILE, KUBECONFIG, or in-cluster credentials in a pod\n',
  )
})

t.test('a cluster that does not serve the kind has nothing to release', async (t) => {
  const fake = await fakeCluster(
    t,
    VIEW_RESOURCES.filter((resource) => resource.kind !== 'VirtualMCPCompositeToolDefinition'),
  )
  const result = await runCli(['release-status', '--kubeconfig', kubeconfigFile(t, fake.server)])
  t.equal(result.code, 0)
  t.equal(
    result.stdout,
    'nothing to release: no validationStatus written by mcp-admission-status (0 objects checked)\n',
  )
})
