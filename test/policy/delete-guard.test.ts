/**
 * The delete guard (src/policy/delete-guard.ts): protection decided per referring path, by the
 * finalizer the object carries; only the referrers nothing holds it for are named.
 */

import t from 'tap'
import { guardDelete } from '../../src/policy/delete-guard.ts'
import type { DeleteFacts } from '../../src/policy/delete-guard.ts'
import { TOOLHIVE_GROUP } from '../../src/policy/kinds.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import {
  MESSAGE_LIMITS,
  formatViolation,
  renderWarnings,
} from '../../src/policy/messages/render.ts'
import { referrersIn } from '../../src/policy/references.ts'
import type { Referrer } from '../../src/policy/references.ts'

const WEBHOOK_FINALIZER = 'mcpwebhookconfig.toolhive.stacklok.dev/finalizer'
const TOOL_FINALIZER = 'toolhive.stacklok.dev/toolconfig-finalizer'

const stored = (kind: string, name: string, finalizers?: unknown): KubeObject => ({
  apiVersion: `${TOOLHIVE_GROUP}/v1beta1`,
  kind,
  metadata: { name, namespace: 'team', ...(finalizers ? { finalizers } : {}) },
})

/** The referrers `object` makes of the target, as the view finds them (with the table's entry). */
function referring(
  kind: string,
  name: string,
  spec: unknown,
  target: Referrer['kind'],
  of: string,
) {
  const object = { ...stored(kind, name), spec }
  return referrersIn(object, { kind: target, name: of })
}

const servers = (...names: string[]): Referrer[] =>
  names.flatMap((name) =>
    referring(
      'MCPServer',
      name,
      { webhookConfigRef: { name: 'hooks' } },
      'MCPWebhookConfig',
      'hooks',
    ),
  )
const facts = (referrers: readonly Referrer[], kind = 'MCPWebhookConfig', name = 'hooks') =>
  ({ kind, name, referrers }) satisfies DeleteFacts

t.test('referenced and unprotected: a violation naming every referrer', async (t) => {
  const cases: { names: string[]; expected: string[] }[] = [
    { names: [], expected: [] },
    {
      names: ['b', 'a', 'b'],
      expected: [
        'Forbidden: MCPWebhookConfig "hooks" is still referenced by MCPServer a, MCPServer b; remove spec.webhookConfigRef from them first',
      ],
    },
    {
      names: ['only'],
      expected: [
        'Forbidden: MCPWebhookConfig "hooks" is still referenced by MCPServer only; remove spec.webhookConfigRef from it first',
      ],
    },
  ]
  for (const { names, expected } of cases) {
    for (const finalizers of [undefined, ['example.com/other'], 'not-a-list']) {
      const result = guardDelete(
        stored('MCPWebhookConfig', 'hooks', finalizers),
        facts(servers(...names)),
      )
      t.same(result.violations.map(formatViolation), expected, names.join(','))
      t.same(result.warnings, [])
      t.equal(result.protection, names.length > 0 ? 'unprotected' : undefined)
    }
  }
  t.match(
    guardDelete(undefined, facts(servers('a'))).violations.map(formatViolation),
    ['Forbidden: MCPWebhookConfig "hooks" is still referenced by MCPServer a; remove'],
    'no old object: named by the request',
  )
})

t.test("referenced and held by the operator's finalizer: allowed, warned", async (t) => {
  const held = stored('MCPWebhookConfig', 'hooks', ['example.com/other', WEBHOOK_FINALIZER])
  t.same(guardDelete(held, facts(servers('b', 'a', 'b'))), {
    violations: [],
    warnings: ['deletion waits for MCPServer a, MCPServer b'],
    protection: 'protected',
  })
  t.same(guardDelete(held, facts([])), { violations: [], warnings: [] })
  const many = guardDelete(
    held,
    facts(servers(...Array.from({ length: 50 }, (_, i) => `server-${i}`))),
  )
  t.equal(many.violations.length, 0)
  const [rendered] = renderWarnings(many.warnings)
  t.ok(rendered!.length <= MESSAGE_LIMITS.warningChars, 'a short warning however many')
  t.match(rendered, /^deletion waits for MCPServer server-0, MCPServer server-1, .*…$/)
})

t.test(
  'protection is per referring path: the finalizer holds only for the paths it counts',
  async (t) => {
    // MCPToolConfig's finalizer counts MCPServer spec.toolConfigRef, not an MCPRemoteProxy's, nor a
    // VirtualMCPServer's aggregation.
    const byServer = referring(
      'MCPServer',
      's',
      { toolConfigRef: { name: 'tools' } },
      'MCPToolConfig',
      'tools',
    )
    const byProxy = referring(
      'MCPRemoteProxy',
      'p',
      { toolConfigRef: { name: 'tools' } },
      'MCPToolConfig',
      'tools',
    )
    const byVirtual = referring(
      'VirtualMCPServer',
      'v',
      {
        config: {
          aggregation: {
            tools: [{ toolConfigRef: { name: 'tools' } }, { toolConfigRef: { name: 'tools' } }],
          },
        },
      },
      'MCPToolConfig',
      'tools',
    )
    const held = stored('MCPToolConfig', 'tools', [TOOL_FINALIZER])
    const of = (referrers: Referrer[]) => facts(referrers, 'MCPToolConfig', 'tools')
    t.same(guardDelete(held, of(byServer)).warnings, ['deletion waits for MCPServer s'])
    t.same(
      guardDelete(held, of([...byServer, ...byProxy, ...byVirtual])).violations.map(
        formatViolation,
      ),
      [
        'Forbidden: MCPToolConfig "tools" is still referenced by MCPRemoteProxy p, VirtualMCPServer v; remove spec.config.aggregation.tools[].toolConfigRef, spec.toolConfigRef from them first',
      ],
    )
    t.same(
      guardDelete(stored('MCPToolConfig', 'tools'), of(byServer)).violations.map(formatViolation),
      [
        'Forbidden: MCPToolConfig "tools" is still referenced by MCPServer s; remove spec.toolConfigRef from it first',
      ],
      'without the finalizer (removed, or an operator that never set it) nothing holds it',
    )
    const group = referring('MCPServerEntry', 'entry', { groupRef: { name: 'g' } }, 'MCPGroup', 'g')
    t.same(
      guardDelete(
        stored('MCPGroup', 'g', ['toolhive.stacklok.dev/mcpgroup-finalizer']),
        facts(group, 'MCPGroup', 'g'),
      ).protection,
      'unprotected',
      "MCPGroup's finalizer holds nothing",
    )
    const bare = referring(
      'VirtualMCPServer',
      'v',
      { config: { groupRef: 'g' }, groupRef: { name: 'g' } },
      'MCPGroup',
      'g',
    )
    t.same(
      bare.map(({ path }) => path),
      ['spec.groupRef.name'],
    )
  },
)

t.test('not looked at, or not readable: admitted', async (t) => {
  t.same(
    guardDelete(undefined, {
      kind: 'MCPGroup',
      name: 'g',
      exempt: 'namespace team is terminating',
    }),
    {
      violations: [],
      warnings: [],
    },
  )
  t.same(guardDelete(undefined, { kind: 'MCPGroup', name: 'g', unread: 'cannot read x' }), {
    violations: [],
    warnings: ['not checked: cannot read x'],
  })
})
