import t from 'tap'
import { referencesIn } from '../../src/policy/references.ts'
import { storedServer, viewCollections } from '../../bench/list-server.ts'
import {
  CONFIG_KINDS,
  NAMESPACES,
  TARGET,
  TARGET_REFERENCES,
  configCount,
  populationObjects,
} from '../../bench/population.ts'

/** `kind namespace/name` of every config of a population of `servers`. */
function configKeys(servers: number): Set<string> {
  const keys = new Set<string>()
  for (const [, collection] of viewCollections(servers))
    for (let c = 0; c < collection.count; c++) {
      const object = collection.item(c)
      if (object.kind === 'MCPServer') break
      const { name, namespace } = object.metadata as { name: string; namespace: string }
      keys.add(`${String(object.kind)} ${namespace}/${name}`)
    }
  return keys
}

t.test('1 % as many configs of each kind as servers, at least one per namespace', async (t) => {
  t.equal(CONFIG_KINDS.length, 9)
  t.equal(configCount(100_000), 1_000)
  t.equal(configCount(10_000), NAMESPACES)
  t.equal(configCount(1_000), NAMESPACES)
  const collections = [...viewCollections(100_000).values()]
  t.equal(
    collections.reduce((sum, c) => sum + c.count, 0),
    100_000 + 9 * 1_000,
    'what the view lists',
  )
})

t.test("every server names three configs, all of its namespace's and all there", async (t) => {
  for (const servers of [1_000, 100_000]) {
    const configs = configKeys(servers)
    t.equal(configs.size, 9 * configCount(servers))
    const named = new Map<string, number>()
    let wrong = 0
    for (let i = 0; i < servers; i += servers === 1_000 ? 1 : 37) {
      const server = storedServer(i, servers)
      const targets = referencesIn({ ...server, kind: 'MCPServer' })
      if (targets.length !== 3) wrong++
      for (const target of targets) {
        const key = `${target.kind} ${String(server.metadata?.namespace)}/${target.name}`
        if (!configs.has(key)) wrong++
        named.set(target.kind, (named.get(target.kind) ?? 0) + 1)
      }
    }
    t.equal(wrong, 0, `${servers}: three references each, none missing`)
    t.same(
      [...named.keys()].sort(),
      [
        'MCPAuthzConfig',
        'MCPExternalAuthConfig',
        'MCPGroup',
        'MCPOIDCConfig',
        'MCPTelemetryConfig',
        'MCPToolConfig',
        'MCPWebhookConfig',
      ],
      'the third reference goes to five kinds in turn',
    )
  }
})

t.test('the in-process population holds the same shapes, the target included', async (t) => {
  const kinds = new Map<string, number>()
  let target: Record<string, unknown> | undefined
  for (const object of populationObjects(1_000)) {
    kinds.set(String(object.kind), (kinds.get(String(object.kind)) ?? 0) + 1)
    if (object.metadata?.name === TARGET.name) target = object.spec as Record<string, unknown>
  }
  t.equal(kinds.get('MCPServer'), 1_000)
  t.equal(kinds.get('ConfigMap'), 1_000)
  for (const { kind } of CONFIG_KINDS) t.equal(kinds.get(kind), NAMESPACES, kind)
  for (const [field, name] of Object.entries(TARGET_REFERENCES))
    t.match(target?.[field], { name }, `the target's ${field}`)
})
