/**
 * The API server's own verdict on a custom resource, offline: given the CRDs, an object of one of
 * their kinds is decoded as the API server decodes it (unknown fields pruned and named, defaults
 * applied), then validated against its version's structural schema (ajv) and, when that found
 * nothing that blocks them, its CEL rules — the order and the words of kube-apiserver v1.37.
 * Each version's schema and rules are compiled the first time an object needs them, once per
 * catalog: CRDs of kinds no object has cost only their reading. A version that does not compile
 * is a CrdInputError naming the CRD, the version and the keyword or rule.
 */

import type { ValidateFunction } from 'ajv'
import { groupOf } from '../kube/object.ts'
import type { JsonObject, KubeObject } from '../kube/object.ts'
import { violation } from '../messages/field-errors.ts'
import type { FieldViolation, ViolationType } from '../messages/field-errors.ts'
import { compileRules, RuleCompileError } from './cel-rules.ts'
import type { RuleNode } from './cel-rules.ts'
import { celViolations } from './cel-validate.ts'
import { CrdInputError } from './crd-definition.ts'
import type { CrdDefinition, CrdVersion } from './crd-definition.ts'
import { pruneAndDefault } from './prune-default.ts'
import { compileSchema } from './schema-compile.ts'
import { SchemaCompileError } from './schema-keywords.ts'
import { schemaViolations } from './schema-errors.ts'
import { structureViolations } from './structure-checks.ts'

/** Schema errors after which the API server does not run the CEL rules (hasBlockingErr). */
const BLOCKING = new Set<ViolationType>([
  'FieldValueNotSupported',
  'FieldValueRequired',
  'FieldValueTooLong',
  'FieldValueTooMany',
  'FieldValueTypeInvalid',
])

const RULES_SKIPPED = violation.invalid(
  '<nil>',
  null,
  'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
)

export interface CrdInput {
  readonly operation: 'CREATE' | 'UPDATE'
  readonly object: KubeObject
  readonly oldObject?: KubeObject | undefined
  /** Unknown fields refuse the object (kubectl --validate=strict), rather than warn. */
  readonly strict?: boolean
}

export type CrdVerdict =
  /** The object as it would be stored (pruned, defaulted), and its warnings. */
  | { readonly allowed: true; readonly object: KubeObject; readonly warnings: readonly string[] }
  /** Refused at decoding (HTTP 400/404: no fields), with the API server's message. */
  | { readonly allowed: false; readonly decodeError: string; readonly warnings: readonly string[] }
  /** Invalid (HTTP 422), every violation at its field. */
  | {
      readonly allowed: false
      readonly violations: readonly FieldViolation[]
      readonly warnings: readonly string[]
    }

export interface CrdCatalog {
  /**
   * The verdict on an object of a kind the CRDs define (`decode`, then `validate`); undefined for
   * any other kind. Throws CrdInputError when the object's version does not compile.
   */
  evaluate(input: CrdInput): CrdVerdict | undefined
  /**
   * The API server's decoding of a write, before any webhook: unknown fields pruned (named in
   * warnings, or refused when strict), defaults applied, a status subresource's status dropped or
   * kept. Undefined for a kind the CRDs do not define.
   */
  decode(input: CrdInput): CrdVerdict | undefined
  /**
   * The schema, CEL rules and ratcheting of an object already decoded, after the mutating
   * webhooks: its violations and warnings. Undefined for a kind the CRDs do not define.
   */
  validate(input: CrdInput): CrdVerdict | undefined
  /** Whether the CRDs define the object's group and kind. */
  defines(object: KubeObject): boolean
}

/** A catalog of the given CRDs; a later CRD of the same group and kind replaces an earlier one. */
export function crdCatalog(definitions: readonly CrdDefinition[]): CrdCatalog {
  const byKind = new Map<string, CrdDefinition>()
  for (const definition of definitions)
    byKind.set(`${definition.group}/${definition.kind}`, definition)
  const compiled = new Map<CrdVersion, CompiledVersion>()
  const compiledOf = (definition: CrdDefinition, version: CrdVersion): CompiledVersion => {
    let ready = compiled.get(version)
    if (ready === undefined) {
      ready = compileVersion(definition, version)
      compiled.set(version, ready)
    }
    return ready
  }
  const definitionOf = (object: KubeObject) =>
    byKind.get(`${groupOf(object.apiVersion) ?? ''}/${String(object.kind)}`)
  /** The object's definition and version, or the API server's answer to a version it lacks. */
  const versionOf = (input: CrdInput) => {
    const definition = definitionOf(input.object)
    if (definition === undefined) return undefined
    const versionName = String(input.object.apiVersion).split('/')[1] ?? ''
    const version = definition.versions.get(versionName)
    if (version !== undefined) return { definition, version }
    const decodeError = `no matches for kind ${JSON.stringify(definition.kind)} in version ${JSON.stringify(String(input.object.apiVersion))}`
    return { refusal: { allowed: false, decodeError, warnings: [] } as const }
  }
  const decode = (input: CrdInput): CrdVerdict | undefined => {
    const found = versionOf(input)
    if (found === undefined || 'refusal' in found) return found?.refusal
    return decodeVersion(input, found.definition, found.version)
  }
  const validate = (input: CrdInput): CrdVerdict | undefined => {
    const found = versionOf(input)
    if (found === undefined || 'refusal' in found) return found?.refusal
    const { definition, version } = found
    return validateVersion(input, version, compiledOf(definition, version))
  }
  return {
    defines: (object) => definitionOf(object) !== undefined,
    decode,
    validate,
    evaluate: (input) => {
      const decoded = decode(input)
      if (decoded === undefined || !decoded.allowed) return decoded
      const validated = validate({ ...input, object: decoded.object })
      if (validated === undefined) return undefined // unreachable: decode found the version
      return { ...validated, warnings: [...decoded.warnings, ...validated.warnings] }
    },
  }
}

/** A version's schema and CEL rules, compiled. */
interface CompiledVersion {
  readonly validate: ValidateFunction
  readonly rules: RuleNode | undefined
}

function compileVersion(definition: CrdDefinition, version: CrdVersion): CompiledVersion {
  try {
    return { validate: compileSchema(version.schema), rules: compileRules(version.schema) }
  } catch (error) {
    if (!(error instanceof SchemaCompileError || error instanceof RuleCompileError)) throw error
    throw new CrdInputError(
      `CustomResourceDefinition ${definition.name}, version ${version.name}: ${error.message}`,
      definition,
    )
  }
}

function decodeVersion(
  input: CrdInput,
  definition: CrdDefinition,
  version: CrdVersion,
): CrdVerdict {
  const decoded = pruneAndDefault(input.object, version.schema)
  const unknown = decoded.unknownFields.map((f) => `unknown field ${JSON.stringify(f)}`)
  if (input.strict === true && unknown.length > 0) {
    const kind = definition.kind
    return {
      allowed: false,
      decodeError: `${kind} in version ${JSON.stringify(version.name)} cannot be handled as a ${kind}: strict decoding error: ${unknown.join(', ')}`,
      warnings: [],
    }
  }
  const warnings = [
    ...(version.deprecationWarning === undefined ? [] : [version.deprecationWarning]),
    ...(input.strict === true ? [] : unknown),
  ]
  const object: JsonObject = decoded.value
  if (version.statusSubresource) {
    // The main resource's writes never set status: CREATE drops it, UPDATE keeps the stored one.
    const old = storedOf(input, version)
    delete object.status
    if (old !== undefined && Object.hasOwn(old, 'status')) object.status = old.status
  }
  return { allowed: true, object, warnings }
}

function validateVersion(
  input: CrdInput,
  version: CrdVersion,
  { validate, rules }: CompiledVersion,
): CrdVerdict {
  const object = input.object
  const warnings: string[] = []
  const violations = validate(object) ? [] : schemaViolations(object, validate.errors ?? [])
  violations.push(...structureViolations(object, version.schema))
  if (violations.some((v) => BLOCKING.has(v.type))) {
    violations.push(RULES_SKIPPED)
  } else if (rules !== undefined) {
    const cel = celViolations(rules, object, storedOf(input, version))
    violations.push(...cel.violations)
    warnings.push(...cel.warnings)
  }
  if (violations.length > 0) return { allowed: false, violations, warnings }
  return { allowed: true, object, warnings }
}

/** The stored object of an UPDATE as the API server holds it (decoded), which ratcheting reads. */
function storedOf(input: CrdInput, version: CrdVersion): JsonObject | undefined {
  return input.operation === 'UPDATE' && input.oldObject !== undefined
    ? pruneAndDefault(input.oldObject, version.schema).value
    : undefined
}
