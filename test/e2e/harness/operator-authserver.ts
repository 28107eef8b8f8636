/**
 * The ToolHive operator's auth server CA checksum beside mcp-admission
 * (docs/enforcement.md#never-a-fight-with-the-operator): from v0.46 the operator stamps
 * `toolhive.stacklok.dev/authserver-ca-checksum` on the pod template of every proxy whose embedded
 * auth server trusts a CA from a ConfigMap, and rewrites it when that ConfigMap's selected bytes
 * change, so the pods roll. The key is the operator's: a user override naming it never wins (the
 * operator's own value takes precedence), and the webhook passes the operator's value through,
 * whatever it is, on every write.
 *
 * One CA ConfigMap in `namespace` feeds three workloads: an MCPServer and an MCPRemoteProxy that
 * use an embedded auth server (an MCPExternalAuthConfig) and override the key to `user-value`,
 * and a VirtualMCPServer with the same embedded auth server inline, whose CA volumes are
 * operator-managed. Each Deployment must carry the value the operator computes, before and after
 * the ConfigMap's data changes.
 */

import { createHash } from 'node:crypto'
import type { Test } from 'tap'
import { createDevCa } from '../../../src/http/dev-certs.ts'
import { mustKubectl } from './kubectl.ts'
import type { Kubectl } from './kubectl.ts'
import { GROUP, controllerOwner, getObject } from './operator-objects.ts'
import type { Any } from './operator.ts'
import { waitFor } from './processes.ts'

export const AUTHSERVER_CA_CHECKSUM = `${GROUP}/authserver-ca-checksum`
const VOLUMES_HASH = 'toolhive.stacklok.io/podvolumes-hash'
/** The operator's default key for a `caBundleRef` (validation.OIDCCABundleDefaultKey). */
const DEFAULT_CA_KEY = 'ca.crt'
const OVERRIDE_KEY = 'team.example.com/owner'
const USER_VALUE = 'user-value'
const TIMEOUT_MS = 60_000
const RESOURCE_URL = 'https://mcp.example.com'

const NAMES = {
  ca: 'authca-bundle',
  signingKey: 'authca-signing-key',
  hmac: 'authca-hmac',
  delegate: 'authca-delegate',
  oidc: 'authca-oidc',
  auth: 'authca-auth',
  group: 'authca-group',
  server: 'authca-server',
  remote: 'authca-remote',
  vmcp: 'authca-vmcp',
} as const

/** The ConfigMap keys the auth servers select: one for the upstream, one for the issuer. */
const UPSTREAM_KEY = 'upstream-ca.crt'
const ISSUER_KEY = 'issuer-ca.crt'

interface Workload {
  readonly kind: string
  readonly resource: string
  readonly name: string
}

const WORKLOADS: readonly Workload[] = [
  { kind: 'MCPServer', resource: 'mcpserver', name: NAMES.server },
  { kind: 'MCPRemoteProxy', resource: 'mcpremoteproxy', name: NAMES.remote },
  { kind: 'VirtualMCPServer', resource: 'virtualmcpserver', name: NAMES.vmcp },
]

export async function exerciseAuthServer(
  t: Test,
  kubectl: Kubectl,
  namespace: string,
): Promise<void> {
  const [upstreamCa, issuerCa, rotatedCa] = await Promise.all([caPem(), caPem(), caPem()])
  await mustKubectl(
    kubectl,
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: authServerObjects(namespace, { [UPSTREAM_KEY]: upstreamCa, [ISSUER_KEY]: issuerCa }),
    }),
  )

  const before = await expectedChecksums(kubectl, namespace)
  t.comment(`${AUTHSERVER_CA_CHECKSUM} expected: ${describe(before)}`)
  await t.test("the operator's checksum is stamped over the override", async (t) => {
    for (const workload of WORKLOADS) {
      const what = `${workload.kind} ${namespace}/${workload.name}`
      t.match(before.get(workload), /^[0-9a-f]{64}$/, `${what}: a CA is referenced`)
      const deployment = await deploymentWithChecksum(
        kubectl,
        namespace,
        workload,
        before.get(workload),
      )
      const annotations = deployment?.['spec'].template.metadata.annotations ?? {}
      t.ok(deployment, `${what}: the operator wrote its Deployment`)
      t.equal(annotations[AUTHSERVER_CA_CHECKSUM], before.get(workload), `${what}: checksum`)
      t.not(annotations[AUTHSERVER_CA_CHECKSUM], USER_VALUE, `${what}: not the override`)
      if (workload.kind === 'VirtualMCPServer') {
        const volumes = ((deployment?.['spec'].template.spec.volumes ?? []) as Any[]).map(
          (v) => v['name'] as string,
        )
        t.ok(
          volumes.includes('authserver-upstream-ca-0') &&
            volumes.includes('authserver-issuer-ca-0'),
          `${what}: the operator mounts the auth server CAs (${volumes.join(', ')})`,
        )
        t.match(
          deployment?.['metadata'].annotations?.[VOLUMES_HASH],
          /^[0-9a-f]{64}$/,
          `${what}: the operator's pod volumes hash`,
        )
      } else {
        t.equal(annotations[OVERRIDE_KEY], NAMES.auth, `${what}: the other override key`)
      }
    }
  })

  // A rotation of the upstream CA: the operator rewrites each Deployment with the new checksum,
  // and every one of those writes passes through the webhook.
  await mustKubectl(kubectl, [
    'patch',
    'configmap',
    NAMES.ca,
    '-n',
    namespace,
    '--type=merge',
    '-p',
    JSON.stringify({ data: { [UPSTREAM_KEY]: rotatedCa } }),
  ])
  const after = await expectedChecksums(kubectl, namespace)
  t.comment(`${AUTHSERVER_CA_CHECKSUM} expected after the rotation: ${describe(after)}`)
  await t.test('a changed CA is followed with the new checksum', async (t) => {
    for (const workload of WORKLOADS) {
      const what = `${workload.kind} ${namespace}/${workload.name}`
      t.not(after.get(workload), before.get(workload), `${what}: the rotation changes the value`)
      const deployment = await deploymentWithChecksum(
        kubectl,
        namespace,
        workload,
        after.get(workload),
      )
      const annotations = deployment?.['spec'].template.metadata.annotations ?? {}
      t.equal(annotations[AUTHSERVER_CA_CHECKSUM], after.get(workload), `${what}: new checksum`)
    }
  })
}

function describe(checksums: Map<Workload, string>): string {
  return [...checksums].map(([workload, value]) => `${workload.kind} ${value}`).join(', ')
}

/**
 * The workload's proxy Deployment once its stored checksum is `expected`, or as it stands when
 * the wait runs out (the caller's assertion then says what it held instead).
 */
async function deploymentWithChecksum(
  kubectl: Kubectl,
  namespace: string,
  workload: Workload,
  expected: string | undefined,
): Promise<Any | undefined> {
  let last: Any | undefined
  try {
    return await waitFor(
      `${workload.kind} ${namespace}/${workload.name}: ${AUTHSERVER_CA_CHECKSUM}=${expected}`,
      async () => {
        const found = await getObject(kubectl, 'deployment', workload.name, namespace)
        if (found && controllerOwner(found)?.['kind'] === workload.kind) last = found
        const stored = last?.['spec'].template.metadata.annotations?.[AUTHSERVER_CA_CHECKSUM]
        return stored === expected ? last : undefined
      },
      { timeoutMs: TIMEOUT_MS, intervalMs: 500 },
    )
  } catch {
    return last
  }
}

/** What the operator stamps on each workload's pod template, from the objects as they are now. */
async function expectedChecksums(
  kubectl: Kubectl,
  namespace: string,
): Promise<Map<Workload, string>> {
  const configMaps = new Map<string, Any | undefined>()
  const readConfigMap = async (name: string) => {
    if (!configMaps.has(name))
      configMaps.set(name, await getObject(kubectl, 'configmap', name, namespace))
    return configMaps.get(name)
  }
  const expected = new Map<Workload, string>()
  for (const workload of WORKLOADS) {
    const owner = await getObject(kubectl, workload.resource, workload.name, namespace)
    let embedded: Any | undefined
    if (workload.kind === 'VirtualMCPServer') {
      embedded = owner?.['spec'].authServerConfig
    } else {
      const spec = owner?.['spec'] ?? {}
      const configName = spec.authServerRef?.name ?? spec.externalAuthConfigRef?.name
      const config = configName
        ? await getObject(kubectl, 'mcpexternalauthconfig', configName, namespace)
        : undefined
      if (config?.['spec'].type === 'embeddedAuthServer')
        embedded = config['spec'].embeddedAuthServer
    }
    const bundles = new Map<Any, Buffer>()
    for (const ref of caBundleRefs(embedded)) {
      const configMap = await readConfigMap(String(ref['configMapRef'].name))
      bundles.set(ref, caBundleBytes(configMap, ref))
    }
    expected.set(
      workload,
      // A ref without a configMapRef resolves to no bytes, as ResolveCABundle's nil.
      authServerCaChecksum(embedded, (ref) => bundles.get(ref) ?? Buffer.alloc(0)),
    )
  }
  return expected
}

/**
 * `EmbeddedAuthServerConfigMapChecksumForConfig` (cmd/thv-operator/pkg/controllerutil/
 * authserver.go): SHA-256 over each upstream provider's CA bytes then a NUL, then, if any
 * trusted issuer has a CA, the marker `trustedIssuers\0` and each issuer's CA bytes then a NUL;
 * lowercase hex, or '' when nothing references a CA (the operator then stamps no annotation).
 */
export function authServerCaChecksum(
  embedded: Any | undefined,
  bundle: (ref: Any) => Buffer,
): string {
  if (!embedded) return ''
  const hash = createHash('sha256')
  let found = false
  for (const provider of (embedded['upstreamProviders'] ?? []) as Any[]) {
    const ref = upstreamCaBundleRef(provider)
    if (!ref) continue
    hash.update(bundle(ref)).update(Buffer.of(0))
    found = true
  }
  let marker = false
  for (const issuer of (embedded['trustedIssuers'] ?? []) as Any[]) {
    const ref = issuer['caBundleRef'] as Any | undefined
    if (!ref) continue
    if (!marker) hash.update('trustedIssuers\0')
    marker = true
    hash.update(bundle(ref)).update(Buffer.of(0))
    found = true
  }
  return found ? hash.digest('hex') : ''
}

/** `UpstreamProviderConfig.CABundleRef()`: the config block that matches the provider's type. */
function upstreamCaBundleRef(provider: Any): Any | undefined {
  if (provider['type'] === 'oidc') return provider['oidcConfig']?.caBundleRef
  if (provider['type'] === 'oauth2') return provider['oauth2Config']?.caBundleRef
  return undefined
}

function caBundleRefs(embedded: Any | undefined): Any[] {
  if (!embedded) return []
  return [
    ...((embedded['upstreamProviders'] ?? []) as Any[]).map(upstreamCaBundleRef),
    ...((embedded['trustedIssuers'] ?? []) as Any[]).map((issuer) => issuer['caBundleRef']),
  ].filter((ref): ref is Any => ref?.configMapRef !== undefined)
}

/** `ResolveCABundle`: the selected key from `data`, else from `binaryData`. */
function caBundleBytes(configMap: Any | undefined, ref: Any): Buffer {
  const key = String(ref['configMapRef'].key ?? DEFAULT_CA_KEY)
  const text = configMap?.['data']?.[key]
  if (typeof text === 'string') return Buffer.from(text, 'utf8')
  const binary = configMap?.['binaryData']?.[key]
  if (typeof binary === 'string') return Buffer.from(binary, 'base64')
  throw new Error(`ConfigMap ${String(ref['configMapRef'].name)} has no key ${key}`)
}

/** A fresh self-signed CA certificate: the operator parses every PEM block as X.509. */
async function caPem(): Promise<string> {
  return (await createDevCa(2)).cert.toString('pem')
}

/**
 * Everything the operator needs to write the three proxy Deployments: the CA ConfigMap, the
 * Secrets the auth server reads, an MCPOIDCConfig for incoming tokens, the embedded auth server
 * itself, an MCPGroup for the vMCP, and the three workloads.
 */
export function authServerObjects(namespace: string, ca: Record<string, string>): Any[] {
  const issuer = 'https://auth.example.com'
  const caRef = (key: string) => ({ configMapRef: { name: NAMES.ca, key } })
  // The embedded auth server, shared by the MCPExternalAuthConfig and the vMCP's inline copy.
  // Its upstream and its trusted issuer each select one key of the CA ConfigMap.
  const embeddedAuthServer = {
    issuer,
    signingKeySecretRefs: [{ name: NAMES.signingKey, key: 'private-key' }],
    hmacSecretRefs: [{ name: NAMES.hmac, key: 'hmac' }],
    upstreamProviders: [
      {
        name: 'corporate-idp',
        type: 'oidc',
        oidcConfig: {
          issuerUrl: 'https://idp.internal.example.com',
          clientId: 'toolhive-client',
          caBundleRef: caRef(UPSTREAM_KEY),
        },
      },
    ],
    // A trusted issuer needs a token-exchange policy: a delegate client whose audience is the
    // workloads' resource URL (the auth server's only allowed audience).
    delegateClients: [
      {
        clientId: 'reporting-delegate',
        clientSecretRef: { name: NAMES.delegate, key: 'client-secret' },
        scopes: ['openid'],
        audiences: [RESOURCE_URL],
      },
    ],
    trustedIssuers: [
      {
        issuerUrl: 'https://issuer.internal.example.com',
        expectedAudience: 'toolhive-authserver',
        allowedDelegateClients: ['reporting-delegate'],
        caBundleRef: caRef(ISSUER_KEY),
      },
    ],
  }
  // With an embedded auth server the operator requires oidcConfigRef.audience == resourceUrl,
  // and that URL is the auth server's allowed audience.
  const oidcRef = { name: NAMES.oidc, audience: RESOURCE_URL, resourceUrl: RESOURCE_URL }
  // The override names the operator's key: the operator's own value must win.
  const resourceOverrides = {
    proxyDeployment: {
      podTemplateMetadataOverrides: {
        annotations: { [AUTHSERVER_CA_CHECKSUM]: USER_VALUE, [OVERRIDE_KEY]: NAMES.auth },
      },
    },
  }
  const metadata = (name: string) => ({ name, namespace })
  const secret = (name: string, stringData: Record<string, string>) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: metadata(name),
    type: 'Opaque',
    stringData,
  })
  const v1beta1 = `${GROUP}/v1beta1`
  return [
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: metadata(NAMES.ca), data: ca },
    secret(NAMES.signingKey, { 'private-key': 'unused: the proxy never starts here' }),
    secret(NAMES.hmac, { hmac: 'unused: the proxy never starts here' }),
    secret(NAMES.delegate, { 'client-secret': 'unused: the proxy never starts here' }),
    {
      apiVersion: v1beta1,
      kind: 'MCPOIDCConfig',
      metadata: metadata(NAMES.oidc),
      spec: { type: 'inline', inline: { issuer, jwksUrl: `${issuer}/.well-known/jwks.json` } },
    },
    {
      apiVersion: v1beta1,
      kind: 'MCPExternalAuthConfig',
      metadata: metadata(NAMES.auth),
      spec: { type: 'embeddedAuthServer', embeddedAuthServer },
    },
    {
      apiVersion: v1beta1,
      kind: 'MCPServer',
      metadata: metadata(NAMES.server),
      spec: {
        image: 'ghcr.io/example/mcp:1.0',
        transport: 'streamable-http',
        proxyPort: 8080,
        mcpPort: 8080,
        oidcConfigRef: oidcRef,
        authServerRef: { kind: 'MCPExternalAuthConfig', name: NAMES.auth },
        resourceOverrides,
      },
    },
    {
      apiVersion: v1beta1,
      kind: 'MCPRemoteProxy',
      metadata: metadata(NAMES.remote),
      spec: {
        remoteUrl: 'https://remote.example.com/mcp',
        transport: 'streamable-http',
        oidcConfigRef: oidcRef,
        externalAuthConfigRef: { name: NAMES.auth },
        resourceOverrides,
      },
    },
    {
      apiVersion: v1beta1,
      kind: 'MCPGroup',
      metadata: metadata(NAMES.group),
      spec: { description: 'auth server CA checksum' },
    },
    {
      apiVersion: v1beta1,
      kind: 'VirtualMCPServer',
      metadata: metadata(NAMES.vmcp),
      spec: {
        groupRef: { name: NAMES.group },
        incomingAuth: { type: 'oidc', oidcConfigRef: oidcRef },
        outgoingAuth: { source: 'discovered' },
        authServerConfig: embeddedAuthServer,
      },
    },
  ]
}
