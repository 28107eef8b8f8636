/**
 * One stdio predicate: the MCPServer warning, the cap on the proxy Deployment and on its Scale,
 * and the StdioReplicaCapped condition agree on every transport, '' and null included (both decode
 * to Go's zero value, which the operator runs as stdio).
 */

import t from 'tap'
import { mutateProxyDeployment } from '../../src/policy/proxy-deployment.ts'
import { isRefused } from '../../src/policy/result.ts'
import { desiredStatus } from '../../src/policy/status-conditions.ts'
import { capStdioScale } from '../../src/policy/stdio-scale.ts'
import { workloadWarnings } from '../../src/policy/workload-warnings.ts'
import { NAMESPACE, proxyDeployment, runConfigFor, workload } from '../helpers/proxy.ts'

const TRANSPORTS: [label: string, transport: unknown, stdio: boolean][] = [
  ['absent', undefined, true],
  ['null', null, true],
  ["''", '', true],
  ['stdio', 'stdio', true],
  ['sse', 'sse', false],
  ['streamable-http', 'streamable-http', false],
  ['an unknown string', 'http', false],
  ['a number', 1, false],
]

function server(transport: unknown) {
  const spec = transport === undefined ? { replicas: 3 } : { transport, replicas: 3 }
  return workload('MCPServer', 'demo', { spec })
}

t.test('warning, Deployment cap, Scale cap and status condition agree', async (t) => {
  for (const [label, transport, stdio] of TRANSPORTS) {
    const owner = server(transport)

    const warnings = workloadWarnings(
      { operation: 'CREATE', object: owner, oldObject: undefined },
      {},
    )
    const warned = warnings.some((w) => w.includes('stdio transport supports 1 replica'))

    const deployment = mutateProxyDeployment(
      proxyDeployment('MCPServer', 'demo', { replicas: 3 }),
      {
        owner,
        runConfigMap: runConfigFor('MCPServer', 'demo'),
        stored: undefined,
      },
    )
    if (isRefused(deployment)) throw new Error('the proxy Deployment rule never refuses')
    const deploymentCapped = (deployment.object.spec as { replicas: number }).replicas === 1

    const scale = capStdioScale(
      {
        apiVersion: 'autoscaling/v1',
        kind: 'Scale',
        metadata: { name: 'demo', namespace: NAMESPACE },
        spec: { replicas: 3 },
      },
      { deployment: proxyDeployment('MCPServer', 'demo'), owner },
    )
    if (isRefused(scale)) throw new Error('the Scale rule never refuses')
    const scaleCapped = (scale.object.spec as { replicas: number }).replicas === 1

    const condition = desiredStatus(owner)?.conditions.find((c) => c.type === 'StdioReplicaCapped')

    t.same(
      {
        warned,
        deploymentCapped,
        scaleCapped,
        condition: condition?.status,
      },
      {
        warned: stdio,
        deploymentCapped: stdio,
        scaleCapped: stdio,
        condition: stdio ? 'True' : 'False',
      },
      `transport ${label}`,
    )
  }
})
