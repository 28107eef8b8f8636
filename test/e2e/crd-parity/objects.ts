/**
 * The objects of the CRD parity test (test/e2e/crd-parity.test.ts) beside the release's examples:
 * a valid base of each of the four kinds mcp-admission knows, the schema-derived variants
 * (variants.ts), and hand-written violators, one or more for every `x-kubernetes-validations`
 * rule the variants do not reach. A violator is a spec fragment laid over its kind's base (a
 * whole spec for MCPWebhookConfig): it must pass the schema, or the API server never evaluates
 * the CEL rules, so it fills every field the schema requires on its way to the rule.
 */

import type { KubeObject } from '../../../src/policy/kube/object.ts'
import { variantsOf } from './variants.ts'

export const GROUP = 'toolhive.stacklok.dev'

/** A valid spec of each kind mcp-admission knows: the variants break one thing at a time. */
export const BASES: Record<string, Record<string, unknown>> = {
  MCPServer: { image: 'ghcr.io/example/server:1.0.0' },
  MCPRemoteProxy: { remoteUrl: 'https://mcp.example.com/mcp' },
  VirtualMCPServer: { groupRef: { name: 'group' }, incomingAuth: { type: 'anonymous' } },
  MCPWebhookConfig: { validating: [{ name: 'policy', url: 'https://policy.example.com' }] },
}

/** The violators issue 28 names (what v0.50–v0.55 added), on each workload kind. */
export const NAMED_VIOLATORS: Record<string, unknown>[] = [
  { sessionStorage: { provider: 'memory', tls: {} } },
  {
    sessionStorage: {
      provider: 'redis',
      address: 'redis:6379',
      tls: { insecureSkipVerify: true, caCertSecretRef: { name: 'ca', key: 'ca.crt' } },
    },
  },
  {
    sessionStorage: {
      provider: 'redis',
      address: 'redis:6379',
      tls: { caCertSecretRef: { name: '', key: '' } },
    },
  },
  { proxyReadTimeout: '-1s' },
  { replica: 3 },
]

// VirtualMCPServer's embedded authorization server (`spec.authServerConfig`): valid parts, each
// violator below changes one thing. Valid for v0.33.0 too (which requires an upstream provider).
const URL = 'https://mcp.example.com'
const UPSTREAM = {
  name: 'idp',
  type: 'oidc',
  oidcConfig: { issuerUrl: 'https://idp.example.com', clientId: 'client' },
}
const AUTH = { issuer: 'https://auth.example.com', upstreamProviders: [UPSTREAM] }
const TRUST_DOMAIN = {
  name: 'td',
  trustDomain: 'example.org',
  methods: ['spiffe_x509'],
  bundleSource: { type: 'workload_api', workloadAPI: {} },
}
const SPIFFE_CLIENT = {
  clientId: 'client-a',
  trustDomainRef: 'td',
  principalPattern: 'spiffe://example.org/ns/*',
  methods: ['spiffe_x509'],
  audiences: [URL],
  scopes: ['read'],
}
const DELEGATE_CLIENT = {
  clientId: 'delegate',
  clientSecretRef: { name: 'delegate', key: 'secret' },
  audiences: [URL],
  scopes: ['read'],
}
const SUBJECT = { subject: 'svc', allowedResources: [URL] }
const JWT_BEARER_POLICY = { issuerRef: 'a', maxAssertionAge: '5m', subjectBindings: [SUBJECT] }
const EXCHANGE_POLICY = {
  issuerRef: 'a',
  expectedAudience: URL,
  allowedDelegateClients: ['delegate'],
}
const ISSUER = { name: 'a', issuerUrl: 'https://issuer.example.com' }
/** A legacy RFC 8693 trusted issuer (both fields its rules require set). */
const LEGACY_ISSUER = { ...ISSUER, expectedAudience: URL, allowedDelegateClients: ['delegate'] }
const REDIS_ACL = { passwordSecretRef: { name: 'redis', key: 'password' } }

/** A VirtualMCPServer spec fragment: the valid authorization server with `fields` laid over it. */
const auth = (fields: Record<string, unknown>) => ({ authServerConfig: { ...AUTH, ...fields } })
/** SPIFFE client authentication: these trust domains and clients. */
const spiffe = (domains: unknown[], clients: unknown[]) =>
  auth({ spiffeTrustDomains: domains, inboundGrants: { spiffeClientAuth: clients } })
/** One trust domain, one client with `fields` changed. */
const spiffeClient = (fields: Record<string, unknown>) =>
  spiffe([TRUST_DOMAIN], [{ ...SPIFFE_CLIENT, ...fields }])
const redisStorage = (redis: Record<string, unknown>) =>
  auth({ storage: { type: 'redis', redis: { aclUserConfig: REDIS_ACL, ...redis } } })
/** An upstream provider of `type` with `config` (oidcConfig or oauth2Config). */
const upstream = (type: 'oidc' | 'oauth2', config: Record<string, unknown>) =>
  auth({ upstreamProviders: [{ name: 'idp', type, [`${type}Config`]: config }] })
const OAUTH2 = {
  authorizationEndpoint: 'https://idp.example.com/authorize',
  tokenEndpoint: 'https://idp.example.com/token',
}
const DCR = { registrationEndpoint: 'https://idp.example.com/register' }

/** An inline authorization config and a reference to a shared one: mutually exclusive. */
const BOTH_AUTHZ = {
  authzConfig: { type: 'configMap', configMap: { name: 'authz' } },
  authzConfigRef: { name: 'shared' },
}

/** Hand-written violators of rules the generic variants do not reach, by kind. */
export const HAND_VIOLATORS: Record<string, Record<string, unknown>[]> = {
  MCPServer: [{ sessionStorage: { provider: 'redis' } }, BOTH_AUTHZ],
  MCPRemoteProxy: [{ sessionStorage: { provider: 'redis' } }, BOTH_AUTHZ],
  VirtualMCPServer: [
    { sessionStorage: { provider: 'redis' } },
    { incomingAuth: { type: 'oidc' } },
    { config: { sessionStorage: { provider: 'redis', address: 'r:6379', tls: {} } } },
    { embeddingServerRef: { name: 'e' }, config: { optimizer: { embeddingProvider: 'openai' } } },
    {
      config: {
        optimizer: { embeddingProvider: 'openai', embeddingHeaders: { Authorization: 'x' } },
      },
    },
    // spec.authServerConfig, from the top.
    auth({ upstreamProviders: [] }),
    { authServerUpstreamFilter: {} },
    { ...auth({}), authServerUpstreamFilter: {} },
    spiffe([TRUST_DOMAIN], []),
    spiffe([TRUST_DOMAIN, { ...TRUST_DOMAIN, trustDomain: 'example.net' }], [SPIFFE_CLIENT]),
    spiffe(
      [TRUST_DOMAIN, { ...TRUST_DOMAIN, name: 'td2' }],
      [
        SPIFFE_CLIENT,
        {
          ...SPIFFE_CLIENT,
          clientId: 'client-b',
          trustDomainRef: 'td2',
          principalPattern: 'spiffe://example.org/b/*',
        },
      ],
    ),
    spiffe([TRUST_DOMAIN, { ...TRUST_DOMAIN, name: 'td2', trustDomain: 'b.org' }], [SPIFFE_CLIENT]),
    spiffeClient({ trustDomainRef: 'missing' }),
    spiffeClient({ methods: ['spiffe_jwt'] }),
    spiffeClient({ principalPattern: 'spiffe://example.net/ns/*' }),
    spiffe(
      [TRUST_DOMAIN],
      [SPIFFE_CLIENT, { ...SPIFFE_CLIENT, principalPattern: 'spiffe://example.org/b/*' }],
    ),
    spiffe([TRUST_DOMAIN], [SPIFFE_CLIENT, { ...SPIFFE_CLIENT, clientId: 'client-b' }]),
    spiffeClient({ clientId: 'synthetic:client' }),
    spiffeClient({ clientId: 'https://client.example.com' }),
    spiffeClient({ principalPattern: 'spiffe://example.org/a/../*' }),
    spiffe(
      [
        {
          ...TRUST_DOMAIN,
          bundleSource: { type: 'file', file: { configMapName: 'bundle', configMapKey: '..data' } },
        },
      ],
      [SPIFFE_CLIENT],
    ),
    spiffe([{ ...TRUST_DOMAIN, bundleSource: { type: 'file' } }], [SPIFFE_CLIENT]),
    spiffe([{ ...TRUST_DOMAIN, bundleSource: { type: 'bundle_endpoint' } }], [SPIFFE_CLIENT]),
    spiffe([{ ...TRUST_DOMAIN, bundleSource: { type: 'file', workloadAPI: {} } }], [SPIFFE_CLIENT]),
    auth({ insecureAllowHTTP: true, allowConfidentialClientRegistration: true }),
    auth({ issuer: 'http://127.0.0.1:8080', allowConfidentialClientRegistration: true }),
    auth({ forceConfidentialRedirectUris: ['https://app.example.com/callback'] }),
    auth({ delegateClients: [DELEGATE_CLIENT], inboundGrants: { tokenExchange: {} } }),
    auth({
      trustedIssuers: [
        { ...ISSUER, jwtBearerGrant: { maxAssertionAge: '5m', subjectBindings: [SUBJECT] } },
      ],
      inboundGrants: { jwtBearer: {} },
    }),
    auth({ trustedIssuers: [ISSUER, { ...ISSUER, issuerUrl: 'https://other.example.com' }] }),
    auth({ inboundGrants: { tokenExchange: { issuerPolicies: [EXCHANGE_POLICY] } } }),
    auth({
      trustedIssuers: [ISSUER],
      inboundGrants: { tokenExchange: { issuerPolicies: [EXCHANGE_POLICY, EXCHANGE_POLICY] } },
    }),
    auth({ inboundGrants: { jwtBearer: { issuerPolicies: [JWT_BEARER_POLICY] } } }),
    auth({
      trustedIssuers: [ISSUER],
      inboundGrants: { jwtBearer: { issuerPolicies: [JWT_BEARER_POLICY, JWT_BEARER_POLICY] } },
    }),
    auth({ delegateClients: [{ ...DELEGATE_CLIENT, clientSecretRef: { name: '', key: '' } }] }),
    auth({
      inboundGrants: {
        tokenExchange: {
          delegateClients: [{ ...DELEGATE_CLIENT, clientSecretRef: { name: 'x', key: '' } }],
        },
      },
    }),
    auth({
      trustedIssuers: [ISSUER],
      inboundGrants: {
        jwtBearer: { issuerPolicies: [{ ...JWT_BEARER_POLICY, maxAssertionAge: '0s' }] },
      },
    }),
    auth({
      trustedIssuers: [ISSUER],
      inboundGrants: {
        jwtBearer: {
          issuerPolicies: [{ ...JWT_BEARER_POLICY, subjectBindings: [SUBJECT, SUBJECT] }],
        },
      },
    }),
    ...[
      { allowedDelegateClients: ['*', 'delegate'] },
      { allowedDelegateClients: ['*'], allowMayAct: true },
      { actorClaim: 'sub' },
    ].flatMap((fields) => [
      auth({
        trustedIssuers: [ISSUER],
        inboundGrants: { tokenExchange: { issuerPolicies: [{ ...EXCHANGE_POLICY, ...fields }] } },
      }),
      auth({ trustedIssuers: [{ ...LEGACY_ISSUER, ...fields }] }),
    ]),
    auth({ registrationRateLimit: { maxTokens: 1, refillPeriod: '0s' } }),
    auth({ trustedIssuers: [{ ...ISSUER, allowPrivateIPs: true }] }),
    auth({ trustedIssuers: [{ ...ISSUER, actorClaim: 'azp', allowedDelegateClients: ['d'] }] }),
    auth({ trustedIssuers: [{ ...ISSUER, expectedAudience: URL }] }),
    auth({ trustedIssuers: [{ ...ISSUER, caBundleRef: { configMapRef: { key: 'ca.crt' } } }] }),
    auth({
      trustedIssuers: [
        { ...ISSUER, jwtBearerGrant: { maxAssertionAge: '0s', subjectBindings: [SUBJECT] } },
      ],
    }),
    auth({
      trustedIssuers: [
        {
          ...ISSUER,
          jwtBearerGrant: { maxAssertionAge: '5m', subjectBindings: [SUBJECT, SUBJECT] },
        },
      ],
    }),
    redisStorage({ addr: 'redis:6379', sentinelConfig: { masterName: 'm' } }),
    redisStorage({}),
    redisStorage({ clusterMode: true, sentinelConfig: { masterName: 'm' } }),
    auth({ upstreamProviders: [{ name: 'idp', type: 'oidc' }] }),
    upstream('oidc', { issuerUrl: 'https://idp.example.com' }),
    upstream('oidc', {
      issuerUrl: 'https://idp.example.com',
      dcrConfig: DCR,
      clientSecretRef: { name: 's', key: 'k' },
    }),
    upstream('oidc', {
      issuerUrl: 'https://idp.example.com',
      dcrConfig: {
        ...DCR,
        discoveryUrl: 'https://idp.example.com/.well-known/openid-configuration',
      },
    }),
    upstream('oidc', {
      issuerUrl: 'https://idp.example.com',
      clientId: 'client',
      caBundleRef: { configMapRef: { key: 'ca.crt' } },
    }),
    upstream('oidc', {
      issuerUrl: 'https://idp.example.com',
      dcrConfig: { ...DCR, registrationProbeInterval: '30s' },
    }),
    upstream('oauth2', OAUTH2),
    upstream('oauth2', { ...OAUTH2, dcrConfig: {} }),
    upstream('oauth2', { ...OAUTH2, dcrConfig: DCR, clientSecretRef: { name: 's', key: 'k' } }),
    upstream('oauth2', {
      ...OAUTH2,
      dcrConfig: {
        ...DCR,
        discoveryUrl: 'https://idp.example.com/.well-known/openid-configuration',
      },
    }),
    upstream('oauth2', {
      ...OAUTH2,
      clientId: 'client',
      caBundleRef: { configMapRef: { key: 'ca.crt' } },
    }),
    upstream('oauth2', { ...OAUTH2, dcrConfig: { ...DCR, registrationProbeInterval: '30s' } }),
  ],
  MCPWebhookConfig: [{}],
}

/**
 * Objects at the edges of mcp-admission's own MCPWebhookConfig rules
 * (docs/enforcement.md#mcpwebhookconfig) that its CRD may well admit, and, for the workloads, at
 * the edges of the rules mcp-admission once repeated or added (ranges, Secret refs, an empty
 * `webhookConfigRef.name`): the parity test requires the webhooks alone (`check` without CRDs) to
 * admit whatever the CRD admits, except the MCPWebhookConfig cases it lists as known, and every
 * workload whatever the CRD says. A whole spec for MCPWebhookConfig (its entries are built by
 * `hook`), a fragment over the base for the rest.
 */
const hook = (fields: Record<string, unknown> = {}) => ({
  name: 'policy',
  url: 'https://policy.example.com',
  ...fields,
})
const ref = (name: string, key: string) => ({ name, key })
export const EDGE_PROBES: Record<string, Record<string, Record<string, unknown>>> = {
  workloads: {
    'edge: replicas 0, backendReplicas 0': { replicas: 0, backendReplicas: 0 },
    'edge: proxyPort 1': { proxyPort: 1 },
    'edge: proxyPort 65535': { proxyPort: 65535 },
    'edge: proxyPort 0': { proxyPort: 0 },
    'edge: proxyPort 65536': { proxyPort: 65536 },
    'edge: redis, db 0, passwordRef': {
      sessionStorage: {
        provider: 'redis',
        address: 'redis:6379',
        db: 0,
        passwordRef: ref('redis', 'password'),
      },
    },
    'edge: passwordRef name not a Secret name': {
      sessionStorage: { provider: 'redis', address: 'r:6379', passwordRef: ref('Redis_Pass', 'p') },
    },
    'edge: passwordRef key with a slash': {
      sessionStorage: { provider: 'redis', address: 'r:6379', passwordRef: ref('redis', 'a/b') },
    },
    'edge: passwordRef empty': {
      sessionStorage: { provider: 'redis', address: 'r:6379', passwordRef: ref('', '') },
    },
    'edge: webhookConfigRef empty name': { webhookConfigRef: { name: '' } },
    'edge: webhookConfigRef to a missing config': { webhookConfigRef: { name: 'missing' } },
  },
  MCPWebhookConfig: {
    'edge: timeout 1s and 30s': {
      validating: [hook({ timeout: '1s' })],
      mutating: [hook({ name: 'm', timeout: '30s' })],
    },
    'edge: timeout 0s': { validating: [hook({ timeout: '0s' })] },
    'edge: timeout 500ms': { validating: [hook({ timeout: '500ms' })] },
    'edge: timeout 45s': { validating: [hook({ timeout: '45s' })] },
    'edge: timeout 1m30s': { validating: [hook({ timeout: '1m30s' })] },
    'edge: failurePolicy ignore': { validating: [hook({ failurePolicy: 'ignore' })] },
    'edge: http url, insecureSkipVerify': {
      validating: [
        hook({ url: 'http://policy.example.com', tlsConfig: { insecureSkipVerify: true } }),
      ],
    },
    'edge: http url': { validating: [hook({ url: 'http://policy.example.com' })] },
    'edge: url with user info': {
      validating: [hook({ url: 'https://user:pw@policy.example.com' })],
    },
    'edge: url with a fragment': { validating: [hook({ url: 'https://policy.example.com/#f' })] },
    'edge: url with another scheme': { validating: [hook({ url: 'ftp://policy.example.com' })] },
    'edge: url without host': { validating: [hook({ url: 'https:///path' })] },
    'edge: name of 63 characters': { validating: [hook({ name: 'a'.repeat(63) })] },
    'edge: the same name in validating and mutating': {
      validating: [hook()],
      mutating: [hook()],
    },
    'edge: names equal once sanitised': {
      validating: [hook({ name: 'a-b' }), hook({ name: 'a_b' })],
    },
    'edge: every secret ref, valid': {
      validating: [
        hook({
          hmacSecretRef: ref('hmac', 'key'),
          tlsConfig: {
            caSecretRef: ref('ca', 'ca.crt'),
            clientCertSecretRef: ref('client', 'tls.crt'),
            clientKeySecretRef: ref('client', 'tls.key'),
          },
        }),
      ],
    },
    'edge: client cert without key': {
      validating: [hook({ tlsConfig: { clientCertSecretRef: ref('client', 'tls.crt') } })],
    },
    'edge: secret ref name not a Secret name': {
      validating: [hook({ hmacSecretRef: ref('Hmac_Secret', 'key') })],
    },
    'edge: secret ref key with a slash': {
      validating: [hook({ hmacSecretRef: ref('hmac', 'a/b') })],
    },
    'edge: secret ref empty': { validating: [hook({ hmacSecretRef: ref('', '') })] },
  },
}

export interface CrdInfo {
  readonly plural: string
  readonly storage: string
  readonly specSchema: Record<string, unknown> | undefined
  /** The CEL rules under `spec`, for the four kinds only. */
  readonly rules: readonly CelRule[]
}

/** One `x-kubernetes-validations` rule, where it sits and the message it denies with. */
export interface CelRule {
  readonly kind: string
  /** The schema path of the node holding it: `spec.authServerConfig.trustedIssuers[]`. */
  readonly path: string
  readonly rule: string
  readonly message: string
}

export function crdInfo(crd: KubeObject): CrdInfo {
  const spec = crd.spec as any
  const kind = String(spec.names.kind)
  const storage = (spec.versions as any[]).find((v) => v.storage === true)
  const root = storage?.schema?.openAPIV3Schema
  const rules: CelRule[] = []
  const walk = (node: any, path: string) => {
    if (typeof node !== 'object' || node === null) return
    for (const rule of node['x-kubernetes-validations'] ?? []) {
      // None of ToolHive's rules has a fieldPath, reason or messageExpression (v0.33.0–v0.63.0).
      const message = String(rule.message ?? `failed rule: ${rule.rule}`).trim()
      rules.push({ kind, path, rule: String(rule.rule), message })
    }
    for (const [name, child] of Object.entries(node.properties ?? {}))
      walk(child, `${path}.${name}`)
    walk(node.items, `${path}[]`)
    walk(node.additionalProperties, `${path}[*]`)
  }
  if (Object.hasOwn(BASES, kind)) walk(root?.properties?.spec, 'spec')
  return {
    plural: spec.names.plural,
    storage: storage?.name,
    specSchema: root?.properties?.spec,
    rules,
  }
}

/** Schema-derived variants and the violators, for the four kinds. */
export function generated(infos: ReadonlyMap<string, CrdInfo>): KubeObject[] {
  const objects: KubeObject[] = []
  for (const [kind, base] of Object.entries(BASES)) {
    const info = infos.get(kind)
    if (info?.specSchema === undefined) continue
    const object = (spec: unknown, label: string) => ({
      apiVersion: `${GROUP}/${info.storage}`,
      kind,
      metadata: { name: 'x' },
      spec,
      label, // an unknown top-level field too: both sides must name it
    })
    objects.push(object(base, 'base'))
    for (const variant of variantsOf(info.specSchema, base))
      objects.push(object(variant.spec, variant.label))
    for (const violator of HAND_VIOLATORS[kind] ?? []) {
      objects.push(
        object(
          kind === 'MCPWebhookConfig' ? violator : { ...base, ...violator },
          JSON.stringify(violator),
        ),
      )
    }
    if (kind !== 'MCPWebhookConfig') {
      for (const violator of NAMED_VIOLATORS)
        objects.push(object({ ...base, ...violator }, JSON.stringify(violator)))
    }
    const probes = EDGE_PROBES[kind === 'MCPWebhookConfig' ? kind : 'workloads'] ?? {}
    for (const [label, probe] of Object.entries(probes)) {
      objects.push(object(kind === 'MCPWebhookConfig' ? probe : { ...base, ...probe }, label))
    }
  }
  return objects
}

/**
 * Whether a denial's `field: Invalid value: …: message` cause comes from `rule`: the same message
 * at the rule's node (list indices and map keys left out).
 */
export function causeOfRule(rule: CelRule, cause: string): boolean {
  const at = cause.indexOf(': Invalid value: ')
  if (at < 0) return false
  const field = cause.slice(0, at).replace(/\[[^\]]*\]/g, '')
  return field === rule.path.replace(/\[[^\]]*\]/g, '') && cause.endsWith(`: ${rule.message}`)
}

/**
 * Rules no object can break, by kind and message, with the reason. Each is listed here rather
 * than dropped from the count: the parity test fails if one of them is broken after all (then it
 * does not belong here) or if any other rule has no violator.
 */
export const UNREACHABLE_RULES: readonly { kind: string; message: string; reason: string }[] = []
