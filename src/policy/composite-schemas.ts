/**
 * The JSON Schemas of a composite tool (its `parameters`, an elicitation step's `schema`), warned
 * about and never denied (docs/enforcement.md, "Composite tool definitions"): the vmcp checks them
 * with a JSON Schema library this service does not share, so a verdict here could refuse what it
 * accepts. Upstream's own checks on `parameters` (a `type` that is the string `object`) are
 * repeated as warnings; both are then read against JSON Schema's draft-07 meta-schema as data,
 * never compiled (a schema from a request is never turned into code).
 */

import { Ajv } from 'ajv'
import { goQuote } from './go/quote.ts'
import type { JsonObject } from './kube/object.ts'

const REFUSED = 'the vmcp will refuse it at start-up'

let shared: Ajv | undefined

/** One ajv for the process, holding only the meta-schema. */
function metaSchemas(): Ajv {
  shared ??= new Ajv({ strict: false, logger: false })
  return shared
}

/** The warnings about `parameters` (at `path`, `spec.parameters`); none when absent or empty. */
export function parameterWarnings(parameters: JsonObject | undefined, path: string): string[] {
  if (parameters === undefined || Object.keys(parameters).length === 0) return []
  if (!Object.hasOwn(parameters, 'type'))
    return [`${path}: must have a "type" field ("object" for a JSON Schema); ${REFUSED}`]
  const { type } = parameters
  if (typeof type !== 'string') return [`${path}.type: must be a string; ${REFUSED}`]
  if (type !== 'object')
    return [`${path}.type: must be "object", not ${goQuote(type.slice(0, 40))}; ${REFUSED}`]
  return schemaWarnings(parameters, path)
}

/** The warnings about a JSON Schema at `path`; none when it is absent or empty. */
export function schemaWarnings(schema: JsonObject | undefined, path: string): string[] {
  if (schema === undefined || Object.keys(schema).length === 0) return []
  const ajv = metaSchemas()
  let valid: boolean
  try {
    valid = ajv.validateSchema(schema) as boolean
  } catch {
    // A `$schema` ajv does not hold, or a value its comparisons cannot handle
    // (`{"valueOf": 1}`): no verdict, so no warning.
    return []
  }
  if (valid) return []
  // The meta-schema's root takes any object: the first error is always at a keyword.
  const first = ajv.errors?.[0]
  return [
    `${path}: invalid JSON Schema at ${first?.instancePath ?? '/'}: ${first?.message ?? 'invalid'}; the vmcp may refuse it at start-up`,
  ]
}
