/** The requests the CLI synthesises name each resource as the API server would. */

import t from 'tap'
import { requestFor, resourceOf } from '../../src/admission/request.ts'

t.test(
  'resource names: the ToolHive kinds from their table, others by the usual rules',
  async (t) => {
    t.same(
      Object.fromEntries(
        [
          'MCPServer',
          'MCPRemoteProxy',
          'VirtualMCPServer',
          'MCPWebhookConfig',
          'ConfigMap',
          'Deployment',
          'NetworkPolicy',
          'Service',
        ].map((kind) => [kind, resourceOf(kind)]),
      ),
      {
        MCPServer: 'mcpservers',
        MCPRemoteProxy: 'mcpremoteproxies',
        VirtualMCPServer: 'virtualmcpservers',
        MCPWebhookConfig: 'mcpwebhookconfigs',
        ConfigMap: 'configmaps',
        Deployment: 'deployments',
        NetworkPolicy: 'networkpolicies',
        Service: 'services',
      },
    )
    const request = requestFor(
      {
        apiVersion: 'toolhive.stacklok.dev/v1beta1',
        kind: 'MCPRemoteProxy',
        metadata: { name: 'remote', namespace: 'team' },
      },
      { operation: 'CREATE' },
    )
    t.same(request.resource, {
      group: 'toolhive.stacklok.dev',
      version: 'v1beta1',
      resource: 'mcpremoteproxies',
    })
  },
)
