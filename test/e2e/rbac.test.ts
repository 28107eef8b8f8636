/**
 * The shipped RBAC against the real authoriser: the service account reads what the cluster view
 * watches (namespaces too), writes only status and its Lease, and cannot touch Secrets or
 * anything else.
 */

import t from 'tap'
import { SERVICE_ACCOUNT, SERVICE_NAMESPACE, startEnvironment } from './harness/environment.ts'
import { releaseSources } from './toolhive/releases.ts'

// The newest release's CRDs, all 14 kinds (kubectl resolves resource names through discovery: a
// kind not served is asked about under a name RBAC never grants, and the answer is a false "no"),
// and the shipped identity and RBAC; the service itself need not run.
const { crds } = await releaseSources('v0.63.0')
const { kubectl } = await startEnvironment(t, { crds: [crds], service: false })

const AS = `--as=system:serviceaccount:${SERVICE_NAMESPACE}:${SERVICE_ACCOUNT}`

/** [verb, resource, namespace ('' for all), allowed] */
const cases: [string, string, string, boolean][] = [
  ['list', 'mcpservers.toolhive.stacklok.dev', '', true],
  ['watch', 'mcpservers.toolhive.stacklok.dev', '', true],
  ['get', 'mcpremoteproxies.toolhive.stacklok.dev', 'team-a', true],
  ['watch', 'virtualmcpservers.toolhive.stacklok.dev', '', true],
  ['watch', 'mcpwebhookconfigs.toolhive.stacklok.dev', '', true],
  ['get', 'configmaps', 'team-a', true],
  ['get', 'deployments.apps', 'team-a', true],
  ['patch', 'mcpservers.toolhive.stacklok.dev/status', 'team-a', true],
  ['patch', 'mcpwebhookconfigs.toolhive.stacklok.dev/status', 'team-a', true],
  // validationStatus: Invalid (policy/composite-status.ts).
  ['patch', 'virtualmcpcompositetooldefinitions.toolhive.stacklok.dev/status', 'team-a', true],
  ['create', 'leases.coordination.k8s.io', SERVICE_NAMESPACE, true],
  // Namespaces are listed and watched for whether each is terminating (the delete guard).
  ['get', 'namespaces', '', true],
  ['list', 'namespaces', '', true],
  ['watch', 'namespaces', '', true],
  // Nothing more.
  ['get', 'secrets', 'team-a', false],
  ['list', 'secrets', '', false],
  ['get', 'secrets', SERVICE_NAMESPACE, false],
  ['update', 'mcpservers.toolhive.stacklok.dev', 'team-a', false],
  ['patch', 'mcpservers.toolhive.stacklok.dev', 'team-a', false],
  ['delete', 'mcpwebhookconfigs.toolhive.stacklok.dev', 'team-a', false],
  ['patch', 'virtualmcpcompositetooldefinitions.toolhive.stacklok.dev', 'team-a', false],
  // RunConfig ConfigMaps are read one at a time: no list or watch of every ConfigMap's data.
  ['list', 'configmaps', '', false],
  ['watch', 'configmaps', '', false],
  ['create', 'configmaps', 'team-a', false],
  ['update', 'configmaps', 'team-a', false],
  ['list', 'deployments.apps', '', false],
  ['patch', 'deployments.apps', 'team-a', false],
  ['update', 'deployments.apps/scale', 'team-a', false],
  ['create', 'leases.coordination.k8s.io', 'team-a', false],
  ['update', 'leases.coordination.k8s.io', 'kube-system', false],
  ['create', 'pods', 'team-a', false],
  ['create', 'mutatingwebhookconfigurations.admissionregistration.k8s.io', '', false],
  // Read, never written: creating, changing, finalizing or deleting one is not the service's.
  ['create', 'namespaces', '', false],
  ['patch', 'namespaces', '', false],
  ['update', 'namespaces/finalize', '', false],
  ['delete', 'namespaces', '', false],
]

for (const [verb, resource, namespace, allowed] of cases) {
  t.test(
    `${allowed ? 'can' : 'cannot'} ${verb} ${resource}${namespace ? ` in ${namespace}` : ''}`,
    async (t) => {
      const scope = namespace === '' ? ['--all-namespaces'] : ['-n', namespace]
      const [name = resource, subresource] = resource.split('/')
      const sub = subresource === undefined ? [] : [`--subresource=${subresource}`]
      const result = await kubectl(['auth', 'can-i', verb, name, ...sub, AS, ...scope])
      t.equal(result.stdout.trim(), allowed ? 'yes' : 'no', result.stderr)
      t.notMatch(result.stderr, "doesn't have a resource type", 'asked about the served resource')
    },
  )
}

t.test('the Lease is writable only by its name', async (t) => {
  const own = await kubectl([
    'auth',
    'can-i',
    'update',
    'leases.coordination.k8s.io/mcp-admission-reconciler',
    AS,
    '-n',
    SERVICE_NAMESPACE,
  ])
  t.equal(own.stdout.trim(), 'yes')
  const other = await kubectl([
    'auth',
    'can-i',
    'update',
    'leases.coordination.k8s.io/someone-else',
    AS,
    '-n',
    SERVICE_NAMESPACE,
  ])
  t.equal(other.stdout.trim(), 'no')
})
