/**
 * DESIGN §5.2: MCPServer, MCPRemoteProxy and VirtualMCPServer CREATE/UPDATE (v1alpha1 and v1beta1
 * share these fields). The MCPServer cross-field rules repeat its CRD's CEL rules word for word.
 */

import { violation } from './messages/field-errors.ts'
import type { FieldViolation } from './messages/field-errors.ts'
import { checkSecretKeyRef } from './kube/names.ts'
import { isRecord } from './kube/object.ts'
import type { JsonObject } from './kube/object.ts'
import { WORKLOAD_KINDS } from './kinds.ts'
import type { WorkloadKind } from './kinds.ts'
import type { ValidationInput, ValidationResult } from './result.ts'
import { checkInteger, checkRequiredString, isSet, wrongType } from './kube/value-checks.ts'
import { workloadWarnings } from './workload-warnings.ts'

const TRANSPORTS = ['stdio', 'streamable-http', 'sse'] as const
const SESSION_PROVIDERS = ['memory', 'redis'] as const

export const MCPSERVER_MESSAGES = {
  authzExclusive:
    'authzConfig and authzConfigRef are mutually exclusive; use authzConfigRef to reference a shared MCPAuthzConfig',
  rateLimitingRedis: "rateLimiting requires sessionStorage with provider 'redis'",
  perUserAuth:
    'rateLimiting.perUser requires authentication (oidcConfigRef or externalAuthConfigRef)',
  perToolAuth:
    'per-tool perUser rate limiting requires authentication (oidcConfigRef or externalAuthConfigRef)',
} as const

/** What the rule needs from the cluster; absent facts are unknown and warn about nothing. */
export interface WorkloadFacts {
  /** Whether the MCPWebhookConfig named by `spec.webhookConfigRef.name` exists in the namespace. */
  readonly webhookConfigExists?: boolean
}

/** Validates a ToolHive workload on CREATE/UPDATE; other kinds and operations pass untouched. */
export function validateWorkload(input: ValidationInput, facts: WorkloadFacts): ValidationResult {
  const object = input.object
  if (input.operation !== 'CREATE' && input.operation !== 'UPDATE') return none()
  if (!isRecord(object) || !(WORKLOAD_KINDS as readonly unknown[]).includes(object.kind)) {
    return none()
  }
  const kind = object.kind as WorkloadKind
  const spec: unknown = object.spec
  if (isSet(spec) && !isRecord(spec))
    return { ...none(), violations: [wrongType('spec', spec, 'object')] }
  const s: JsonObject = isRecord(spec) ? spec : {}
  const violations = [
    ...checkInteger('spec.replicas', s.replicas, 0),
    ...checkInteger('spec.backendReplicas', s.backendReplicas, 0),
    ...checkInteger('spec.proxyPort', s.proxyPort, 1, 65535),
    ...(kind === 'MCPServer' ? checkTransport(s.transport) : []),
    ...checkSessionStorage(s.sessionStorage),
    ...checkWebhookConfigRef(s.webhookConfigRef),
    ...(kind === 'MCPServer' ? checkMcpServerRules(s) : []),
  ]
  return { violations, warnings: workloadWarnings(kind, s, facts) }
}

function none(): ValidationResult {
  return { violations: [], warnings: [] }
}

function checkTransport(transport: unknown): FieldViolation[] {
  const field = 'spec.transport'
  if (!isSet(transport)) return []
  if (typeof transport !== 'string') return [wrongType(field, transport, 'string')]
  return (TRANSPORTS as readonly string[]).includes(transport)
    ? []
    : [violation.notSupported(field, transport, TRANSPORTS)]
}

function checkSessionStorage(storage: unknown): FieldViolation[] {
  const field = 'spec.sessionStorage'
  if (!isSet(storage)) return []
  if (!isRecord(storage)) return [wrongType(field, storage, 'object')]
  const violations = checkRequiredString(`${field}.provider`, storage.provider, (f, provider) =>
    (SESSION_PROVIDERS as readonly string[]).includes(provider)
      ? []
      : [violation.notSupported(f, provider, SESSION_PROVIDERS)],
  )
  const address = storage.address
  if (storage.provider === 'redis' && (!isSet(address) || address === '')) {
    violations.push(violation.required(`${field}.address`, 'address is required'))
  } else if (isSet(address) && typeof address !== 'string') {
    violations.push(wrongType(`${field}.address`, address, 'string'))
  }
  violations.push(...checkInteger(`${field}.db`, storage.db, 0))
  violations.push(...checkSecretKeyRef(`${field}.passwordRef`, storage.passwordRef))
  return violations
}

function checkWebhookConfigRef(ref: unknown): FieldViolation[] {
  const field = 'spec.webhookConfigRef'
  if (!isSet(ref)) return []
  if (!isRecord(ref)) return [wrongType(field, ref, 'object')]
  return checkRequiredString(`${field}.name`, ref.name)
}

function checkMcpServerRules(spec: JsonObject): FieldViolation[] {
  const violations: FieldViolation[] = []
  if (isSet(spec.authzConfig) && isSet(spec.authzConfigRef)) {
    violations.push(violation.forbidden('spec.authzConfig', MCPSERVER_MESSAGES.authzExclusive))
  }
  const limits = spec.rateLimiting
  if (!isSet(limits)) return violations
  if (!isRecord(limits)) return [...violations, wrongType('spec.rateLimiting', limits, 'object')]
  const storage = spec.sessionStorage
  if (!isRecord(storage) || storage.provider !== 'redis') {
    violations.push(violation.forbidden('spec.rateLimiting', MCPSERVER_MESSAGES.rateLimitingRedis))
  }
  const authenticated = isSet(spec.oidcConfigRef) || isSet(spec.externalAuthConfigRef)
  if (isSet(limits.perUser) && !authenticated) {
    violations.push(
      violation.forbidden('spec.rateLimiting.perUser', MCPSERVER_MESSAGES.perUserAuth),
    )
  }
  const tools = limits.tools
  if (isSet(tools) && !Array.isArray(tools)) {
    violations.push(wrongType('spec.rateLimiting.tools', tools, 'array'))
  } else if (Array.isArray(tools) && !authenticated) {
    // One violation per offending tool, so each names the exact field to fix.
    tools.forEach((tool: unknown, i) => {
      if (isRecord(tool) && isSet(tool.perUser)) {
        const field = `spec.rateLimiting.tools[${i}].perUser`
        violations.push(violation.forbidden(field, MCPSERVER_MESSAGES.perToolAuth))
      }
    })
  }
  return violations
}
