/**
 * Invalid variants of a valid object, derived by walking its CRD's schema: for every constraint
 * a value that breaks it (an enum → a value outside it, a pattern → a string it does not match,
 * bounds → one past them, required → the field removed, a type → a value of another type), and
 * for every node with CEL rules two generic candidates (the node empty, and the node with every
 * property filled) that break the "at least one of" and "mutually exclusive" rules. Parent nodes
 * are created on the way, so a deep variant may break more than its own constraint: the parity
 * test only needs the API server and `check --crds` to agree on each object, whatever it breaks.
 */

type Json = unknown
type Schema = Record<string, any>

export interface Variant {
  /** What it breaks, for messages: `spec.transport enum`. */
  readonly label: string
  readonly spec: Json
}

const MAX_DEPTH = 12

/** The variants of `baseSpec` for every constraint under `specSchema`. */
export function variantsOf(specSchema: Schema, baseSpec: Record<string, Json>): Variant[] {
  const variants: Variant[] = []
  const walk = (schema: Schema, path: (string | number)[], depth: number) => {
    if (depth > MAX_DEPTH) return
    const label = (what: string) =>
      `spec${path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('')} ${what}`
    const add = (what: string, value: Json) => {
      variants.push({ label: label(what), spec: setAt(baseSpec, path, value, specSchema) })
    }
    for (const [what, value] of violatorsOf(schema)) add(what, value)
    if (Array.isArray(schema['x-kubernetes-validations']) && path.length > 0) {
      add('rules: empty', emptyOf(schema))
      add('rules: filled', filled(schema, 3))
    }
    for (const [name, child] of Object.entries(
      (schema.properties ?? {}) as Record<string, Schema>,
    )) {
      walk(child, [...path, name], depth + 1)
    }
    if (schema.items) walk(schema.items as Schema, [...path, 0], depth + 1)
  }
  walk(specSchema, [], 0)
  if (Array.isArray(specSchema['x-kubernetes-validations'])) {
    variants.push({
      label: 'spec rules: filled',
      spec: { ...baseSpec, ...(filled(specSchema, 2) as object) },
    })
  }
  return variants
}

/** [what, value] for each constraint of one node. */
function violatorsOf(schema: Schema): [string, Json][] {
  const out: [string, Json][] = []
  const type = schema.type as string | undefined
  if (type !== undefined) out.push(['type', type === 'string' ? 5 : 'not-a-' + type])
  if (Array.isArray(schema.enum)) out.push(['enum', 'not-in-enum'])
  if (typeof schema.pattern === 'string') {
    const miss = ['', '!', 'A B', '0', '-', 'a'].find((s) => !safeTest(schema.pattern as string, s))
    if (miss !== undefined) out.push(['pattern', miss])
  }
  if (typeof schema.minLength === 'number' && schema.minLength > 0)
    out.push(['minLength', 'a'.repeat(schema.minLength - 1)])
  if (typeof schema.maxLength === 'number')
    out.push(['maxLength', 'a'.repeat(schema.maxLength + 1)])
  if (typeof schema.minimum === 'number') out.push(['minimum', schema.minimum - 1])
  if (typeof schema.maximum === 'number') out.push(['maximum', schema.maximum + 1])
  if (schema.format === 'int32') out.push(['format int32', 2 ** 31])
  if (schema.format === 'duration' || schema.format === 'date-time' || schema.format === 'uri')
    out.push([`format ${schema.format}`, '::not valid::'])
  const item = schema.items ? valueOf(schema.items as Schema) : 'x'
  if (typeof schema.minItems === 'number' && schema.minItems > 0) out.push(['minItems', []])
  if (typeof schema.maxItems === 'number')
    out.push(['maxItems', Array.from({ length: schema.maxItems + 1 }, () => item)])
  if (schema['x-kubernetes-list-type'] === 'set') out.push(['set duplicate', [item, item]])
  if (schema['x-kubernetes-list-type'] === 'map') out.push(['map duplicate key', [item, item]])
  if (Array.isArray(schema.required) && schema.required.length > 0) out.push(['required', {}])
  return out
}

function safeTest(pattern: string, text: string): boolean {
  try {
    return new RegExp(pattern).test(text)
  } catch {
    return true // a pattern JavaScript cannot read: no variant
  }
}

/** A plausible valid value for a node: enum's first, the minimum, required members filled. */
function valueOf(schema: Schema, depth = 2): Json {
  if (Array.isArray(schema.enum)) return schema.enum[0]
  switch (schema.type) {
    case 'string':
      return schema.format === 'duration'
        ? '1m'
        : schema.format === 'uri'
          ? 'https://example.com'
          : 'abc'
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1
    case 'boolean':
      return true
    case 'array':
      return schema.items ? [valueOf(schema.items as Schema, depth - 1)] : []
    case 'object': {
      const out: Record<string, Json> = {}
      for (const name of (schema.required ?? []) as string[]) {
        const child = (schema.properties ?? {})[name] as Schema | undefined
        if (child && depth > 0) out[name] = valueOf(child, depth - 1)
      }
      return out
    }
    default:
      return 'abc'
  }
}

function emptyOf(schema: Schema): Json {
  return schema.type === 'array' ? [] : schema.type === 'string' ? '' : {}
}

/** The node with every property set (to `depth`): breaks rules that forbid combinations. */
function filled(schema: Schema, depth: number): Json {
  if (schema.type !== 'object' || depth === 0) return valueOf(schema)
  const out: Record<string, Json> = {}
  for (const [name, child] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
    out[name] = filled(child, depth - 1)
  }
  return out
}

/** A copy of `base` with `value` at `path`, creating parents as the schema says (lists of one). */
function setAt(
  base: Record<string, Json>,
  path: (string | number)[],
  value: Json,
  schema: Schema,
): Json {
  if (path.length === 0) return value
  const root = structuredClone(base)
  let node: any = root
  let nodeSchema = schema
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i]!
    const childSchema: Schema =
      typeof key === 'number' ? nodeSchema.items : (nodeSchema.properties ?? {})[key]
    if (node[key] === undefined || node[key] === null || typeof node[key] !== 'object') {
      node[key] = childSchema.type === 'array' ? [] : valueOf(childSchema)
    }
    node = node[key]
    nodeSchema = childSchema
  }
  node[path[path.length - 1]!] = value
  return root
}
