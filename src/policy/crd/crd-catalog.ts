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
   * The verdict on an object of a kind the CRDs define; undefined for any other kind. Throws
   * CrdInputError when the object's version does not compile.
   */
  evaluate(input: CrdInput): CrdVerdict | undefined
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
  return {
    defines: (object) => definitionOf(object) !== undefined,
    evaluate: (input) => {
      const definition = definitionOf(input.object)
      if (definition === undefined) return undefined
      const versionName = String(input.object.apiVersion).split('/')[1] ?? ''
      const version = definition.versions.get(versionName)
      if (version === undefined) {
        return {
          allowed: false,
          decodeError: `no matches for kind ${JSON.stringify(definition.kind)} in version ${JSON.stringify(String(input.object.apiVersion))}`,
          warnings: [],
        }
      }
      return evaluateVersion(input, definition, version, compiledOf(definition, version))
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

function evaluateVersion(
  input: CrdInput,
  definition: CrdDefinition,
  version: CrdVersion,
  { validate, rules }: CompiledVersion,
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
  const old =
    input.operation === 'UPDATE' && input.oldObject !== undefined
      ? pruneAndDefault(input.oldObject, version.schema).value
      : undefined
  if (version.statusSubresource) {
    // The main resource's writes never set status: CREATE drops it, UPDATE keeps the stored one.
    delete object.status
    if (old !== undefined && Object.hasOwn(old, 'status')) object.status = old.status
  }
  const violations = validate(object) ? [] : schemaViolations(object, validate.errors ?? [])
  violations.push(...structureViolations(object, version.schema))
  if (violations.some((v) => BLOCKING.has(v.type))) {
    violations.push(RULES_SKIPPED)
  } else if (rules !== undefined) {
    const cel = celViolations(rules, object, old)
    violations.push(...cel.violations)
    warnings.push(...cel.warnings)
  }
  if (violations.length > 0) return { allowed: false, violations, warnings }
  return { allowed: true, object, warnings }
}
