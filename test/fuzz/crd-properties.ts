/**
 * `check --crds` over hostile CRDs: schemas whose keywords are sometimes of the wrong type or out
 * of range, with hostile property names, patterns RE2 refuses, rules that do not compile or fail
 * at run time, and arbitrary objects of the CRD's kind. Reading a CRD gives a definition or a
 * CrdInputError; evaluating an object gives a verdict or a CrdInputError naming that CRD, never
 * another exception (which `check` would print as a stack trace, exit 1: "denied"). Shared by
 * test/fuzz/crds.test.ts (fixed seed, bounded) and `npm run fuzz` (random seed, timed).
 */

import fc from 'fast-check'
import { crdCatalog } from '../../src/policy/crd/crd-catalog.ts'
import type { CrdVerdict } from '../../src/policy/crd/crd-catalog.ts'
import { CrdInputError, readCrd } from '../../src/policy/crd/crd-definition.ts'
import type { CrdDefinition } from '../../src/policy/crd/crd-definition.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { anyJson, field, key, number, obj } from './objects.ts'
import type { FuzzProperty } from './property.ts'
import { preview, wire } from './wire.ts'

const count = fc.integer({ min: 0, max: 4 })

/**
 * A schema keyword: mostly absent, else a value of its kind, and in a hostile CRD now and then
 * any JSON. Most CRDs are well-formed, so that their objects reach the evaluation.
 */
function keyword(good: fc.Arbitrary<unknown>, hostile: boolean): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 30, arbitrary: fc.constant(undefined) },
    { weight: 12, arbitrary: good },
    ...(hostile ? [{ weight: 2, arbitrary: anyJson }] : []),
  )
}

const RULES = fc.constantFrom(
  'true',
  'self.a > 1',
  'self.size() > 0',
  'has(self.x) || self.y == 2',
  'self == oldSelf',
  "self.a.startsWith('x')",
  'self.all(k, k != "")',
  'self.matches("^a")',
  'self.isSorted()',
  'self.a +',
  'duration(self.t) > duration("1s")',
)

/** A rule; in a hostile CRD its fields are sometimes any JSON. */
function rule(hostile: boolean): fc.Arbitrary<unknown> {
  const of = (good: fc.Arbitrary<unknown>) =>
    hostile ? field(good) : fc.option(good, { nil: undefined })
  return obj({
    rule: hostile ? field(RULES) : RULES,
    message: of(fc.string({ maxLength: 8 })),
    messageExpression: of(fc.constantFrom("'m'", 'self.a', '1', 'self.list[5]', "'a' +")),
    fieldPath: of(fc.constantFrom('.a', ".m['x.y']", '.list[0]', 'no path', '')),
    reason: of(fc.constantFrom('FieldValueForbidden', 'FieldValueRequired', 'Bogus')),
    optionalOldSelf: of(fc.boolean()),
  })
}

/**
 * A schema node `depth` levels deep at most, every keyword optional; in a hostile one, keywords
 * are sometimes any JSON and patterns sometimes not RE2.
 */
function schemaAt(depth: number, hostile: boolean): fc.Arbitrary<unknown> {
  const child = depth === 0 ? fc.constant({ type: 'string' }) : schemaAt(depth - 1, hostile)
  const patterns = ['^[a-z]+$', '[[:alpha:]]', '\\p{L}', '^a']
  const notRe2 = ['(?<=x)', '(', 'a{2,1}']
  const of = (good: fc.Arbitrary<unknown>) => keyword(good, hostile)
  return obj({
    type: (hostile ? field : (good: fc.Arbitrary<unknown>) => good)(
      fc.constantFrom('object', 'array', 'string', 'integer', 'number', 'boolean'),
    ),
    properties: of(fc.dictionary(key, child, { maxKeys: 3 })),
    items: of(child),
    additionalProperties: of(fc.oneof(child, fc.boolean())),
    allOf: of(fc.array(child, { maxLength: 2 })),
    anyOf: of(fc.array(child, { maxLength: 2 })),
    not: of(child),
    pattern: of(fc.constantFrom(...patterns, ...(hostile ? notRe2 : []))),
    format: of(fc.constantFrom('int32', 'date-time', 'byte', 'duration', 'uuid', 'email')),
    minLength: of(count),
    maxLength: of(count),
    minItems: of(count),
    maxItems: of(count),
    minProperties: of(count),
    maxProperties: of(count),
    minimum: of(number),
    maximum: of(number),
    multipleOf: of(fc.constantFrom(0.5, 1, 2, 3)),
    exclusiveMinimum: of(fc.boolean()),
    exclusiveMaximum: of(fc.boolean()),
    uniqueItems: of(hostile ? fc.boolean() : fc.constant(false)),
    enum: of(fc.array(anyJson, { maxLength: 3 })),
    required: of(fc.array(key, { maxLength: 2 })),
    nullable: of(fc.boolean()),
    default: of(anyJson),
    'x-kubernetes-int-or-string': of(fc.boolean()),
    'x-kubernetes-preserve-unknown-fields': of(fc.boolean()),
    'x-kubernetes-embedded-resource': of(fc.boolean()),
    'x-kubernetes-list-type': of(fc.constantFrom('atomic', 'set', 'map')),
    'x-kubernetes-list-map-keys': of(fc.array(key, { maxLength: 2 })),
    'x-kubernetes-validations': of(fc.array(rule(hostile), { maxLength: 2 })),
  })
}

const crd = fc
  .oneof({ weight: 3, arbitrary: schemaAt(3, false) }, { weight: 1, arbitrary: schemaAt(3, true) })
  .map((spec): KubeObject =>
    wire({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'things.example.com' },
      spec: {
        group: 'example.com',
        names: { kind: 'Thing', plural: 'things' },
        versions: [
          {
            name: 'v1',
            served: true,
            subresources: { status: {} },
            schema: { openAPIV3Schema: { type: 'object', properties: { spec } } },
          },
        ],
      },
    }),
  )

const thing = (spec: unknown): KubeObject =>
  wire({
    apiVersion: 'example.com/v1',
    kind: 'Thing',
    metadata: { name: 't', namespace: 'ns' },
    ...(spec === undefined ? {} : { spec }),
  })

/** Thrown by the property to fail with a readable reason. */
class Broken extends Error {
  override name = 'PropertyBroken'
}

/** A verdict's shape: an admitted object, a decode error, or at least one violation. */
function checkVerdict(verdict: CrdVerdict | undefined): void {
  if (verdict === undefined) throw new Broken('no verdict for a kind the CRD defines')
  if (!verdict.warnings.every((w) => typeof w === 'string'))
    throw new Broken('a warning that is not a string')
  if (verdict.allowed) return
  if ('decodeError' in verdict) return
  if (verdict.violations.length === 0) throw new Broken('refused without violations')
}

export const CRD_PROPERTIES: readonly FuzzProperty[] = [
  {
    name: 'CRD evaluation: a verdict or a CrdInputError naming the CRD, never another exception',
    runs: 1000,
    property: () =>
      fc.property(
        crd,
        field(anyJson),
        field(anyJson),
        fc.boolean(),
        (object, spec, oldSpec, strict) => {
          let definition: CrdDefinition
          try {
            definition = readCrd(object)
          } catch (error) {
            if (error instanceof CrdInputError) return
            throw error
          }
          const catalog = crdCatalog([definition])
          try {
            checkVerdict(catalog.evaluate({ operation: 'CREATE', object: thing(spec), strict }))
            checkVerdict(
              catalog.evaluate({
                operation: 'UPDATE',
                object: thing(spec),
                oldObject: thing(oldSpec),
                strict,
              }),
            )
          } catch (error) {
            if (error instanceof CrdInputError && error.definition === definition) return
            if (error instanceof Broken) throw error
            throw new Broken(`${String(error)} for the spec schema ${preview(object.spec, 600)}`)
          }
        },
      ),
  },
]
