import t from 'tap'
import { createDecide } from '../../src/admission/decide.ts'
import { admit } from '../../src/cli/admit-object.ts'
import { KubeApi } from '../../src/cluster/kube-api.ts'
import { MemoryView } from '../../src/cluster/memory-view.ts'
import { createDevCertificates } from '../../src/http/dev-certs.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import {
  auditCollections,
  plantedDefects,
  storedProxyDeployment,
  storedRunConfigMap,
} from '../../bench/audit-population.ts'
import { parseLabelSelector } from '../../bench/label-selector.ts'
import { startListServer, storedServer } from '../../bench/list-server.ts'
import { CONFIG_KINDS, NAMESPACES, configCount, configObject } from '../../bench/population.ts'

t.test('label selectors keep what the API server keeps', async (t) => {
  const labels = { 'toolhive.stacklok.io/component': 'run-config', toolhive: 'true' }
  const keeps = (selector: string) => parseLabelSelector(selector)(labels)
  t.ok(keeps('toolhive.stacklok.io/component in (run-config,vmcp-config)'))
  t.notOk(keeps('toolhive.stacklok.io/component in (vmcp-config)'))
  t.ok(keeps('toolhive=true'))
  t.ok(keeps('toolhive==true,toolhive.stacklok.io/component'))
  t.notOk(keeps('toolhive!=true'))
  t.ok(keeps('app!=web'), 'without the label')
  t.ok(keeps('app notin (web)'), 'without the label')
  t.notOk(keeps('toolhive,!toolhive.stacklok.io/component'))
  t.ok(keeps(''), 'an empty selector keeps everything')
  t.throws(() => parseLabelSelector('toolhive in run-config'))
})

/** `audit`'s verdict: ToolHive kinds as a CREATE, the others as an UPDATE to themselves. */
async function audited(view: MemoryView, object: KubeObject) {
  const update = object.kind === 'ConfigMap' || object.kind === 'Deployment'
  const verdict = await admit(createDecide({ view }), object, {
    namespace: '',
    ...(update ? { operation: 'UPDATE', oldObject: object } : {}),
  })
  if (!verdict.admitted) return { denied: verdict.causes }
  return { patch: verdict.patch.length, warnings: verdict.warnings }
}

t.test('the audit finds nothing to change but the planted defects', async (t) => {
  const servers = 30_000
  const planted = plantedDefects(servers)
  t.same(
    [...planted.values()],
    ['stale runconfig-checksum', 'stdio proxy at 2 replicas', 'no THV_MCPSERVER_GENERATION entry'],
  )
  const sample = [...Array.from({ length: 40 }, (_, i) => i), ...planted.keys()]
  const configs = CONFIG_KINDS.flatMap((kind) =>
    Array.from({ length: configCount(servers) }, (_, c) => configObject(kind, c)),
  )
  const view = new MemoryView(configs)
  for (const i of sample) {
    view.put(storedServer(i, servers))
    view.put(storedRunConfigMap(i))
  }
  const clean = { patch: 0, warnings: [] }
  // Every server names three configs of its namespace, all there: no reference warning.
  for (const config of configs.filter((_, n) => n % 97 === 0))
    t.same(await audited(view, config), clean, JSON.stringify(config.metadata))
  for (const i of sample) {
    t.same(await audited(view, storedServer(i, servers)), clean, `MCPServer ${i}`)
    t.same(await audited(view, storedRunConfigMap(i)), clean, `ConfigMap ${i}`)
    const deployment = await audited(view, storedProxyDeployment(i))
    t.equal(deployment.patch, planted.has(i) ? 1 : 0, `Deployment ${i}: ${planted.get(i)}`)
  }
})

t.test('the stand-in pages each collection through its label selector', async (t) => {
  const servers = 23
  const { ca, cert, key } = await createDevCertificates()
  const unknown: string[] = []
  const cluster = await startListServer(auditCollections(servers), { key, cert }, (path) =>
    unknown.push(path),
  )
  t.teardown(() => {
    cluster.close()
  })
  const api = new KubeApi({
    server: cluster.url,
    applyTo: async (options) => {
      options.ca = ca
    },
  })
  t.teardown(() => {
    api.close()
  })
  const list = async (path: string, labelSelector?: string) => {
    const items: any[] = []
    let token: string | undefined
    do {
      const page = (await api.get(path, { limit: 7, continue: token, labelSelector })) as any
      items.push(...page.items)
      token = page.metadata.continue
    } while (token !== undefined)
    return items
  }
  const runConfigs = await list(
    '/api/v1/configmaps',
    'toolhive.stacklok.io/component in (run-config,vmcp-config)',
  )
  t.equal(runConfigs.length, servers)
  t.equal(
    (await list('/api/v1/configmaps')).length,
    servers + NAMESPACES,
    'each namespace has one more',
  )
  const proxies = await list('/apis/apps/v1/deployments', 'toolhive=true')
  t.equal(proxies.length, servers)
  t.notOk('kind' in proxies[0] || 'apiVersion' in proxies[0], 'items as the API server lists them')
  t.equal((await list('/apis/toolhive.stacklok.dev/v1beta1/mcpservers')).length, servers)
  const group = (await api.get('/apis/toolhive.stacklok.dev')) as any
  t.equal(group.preferredVersion.version, 'v1beta1')
  t.equal(await api.get('/apis/apps'), undefined, 'discovery of a group not served is 404')
  t.same(unknown, [])
  t.equal(await api.get('/api/v1/secrets'), undefined, 'so is any other collection')
  t.same(unknown, ['GET /api/v1/secrets'], 'and reported')
})
