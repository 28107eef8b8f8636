/**
 * CRDs for the kinds of the kind table that the e2e suite's fixtures (test/e2e/fixtures/crds: the
 * four kinds it tests) do not define: the population's eight other config kinds (MCPGroup,
 * MCPToolConfig, MCPExternalAuthConfig, MCPOIDCConfig, MCPAuthzConfig, MCPTelemetryConfig,
 * EmbeddingServer, VirtualMCPCompositeToolDefinition) and MCPServerEntry and MCPRegistry, of
 * which it has none; so the API server serves all 14 kinds, as with ToolHive v0.63.0. Like the
 * fixtures they are the bench's own, not ToolHive's: each kind at its first version of the kind
 * table, spec and status of any shape (the population's specs are valid under v0.63.0's CRDs too:
 * `check --crds` admits them). Without them the API server would not serve these kinds, and
 * mcp-admission would neither list nor watch them.
 */

import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { TOOLHIVE_KIND_TABLE, entryOf } from '../../src/policy/kinds.ts'
import type { ToolHiveKind } from '../../src/policy/kinds.ts'

/** The kinds the fixtures define already. */
const IN_FIXTURES = new Set(['MCPServer', 'MCPRemoteProxy', 'VirtualMCPServer', 'MCPWebhookConfig'])

function crd(kind: ToolHiveKind): Record<string, unknown> {
  const { group, versions, plural } = entryOf(kind)
  const open = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${plural}.${group}`,
      labels: { 'app.kubernetes.io/part-of': 'mcp-admission-bench' },
    },
    spec: {
      group,
      scope: 'Namespaced',
      names: {
        kind,
        listKind: `${kind}List`,
        plural,
        singular: kind.toLowerCase(),
      },
      versions: [
        {
          name: versions[0],
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: open,
                status: open,
              },
            },
          },
        },
      ],
    },
  }
}

/** Writes the CRDs into `dir` (one JSON file each), for the environment to install. */
export async function writeConfigCrds(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true })
  for (const { kind } of TOOLHIVE_KIND_TABLE)
    if (!IN_FIXTURES.has(kind))
      await writeFile(join(dir, `${entryOf(kind).plural}.json`), JSON.stringify(crd(kind)))
  return dir
}
