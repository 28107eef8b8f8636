/**
 * A composite tool config read as the vmcp and the operator read it: Go's encoding/json into
 * ToolHive's CompositeToolConfig (docs/enforcement.md, "Composite tool definitions"). Much of it
 * is schemaless in the CRD (a forEach's inner `step`, nested output `properties`, `defaultResults`),
 * so the API server lets through what Go then cannot decode; this reads every field as Go does:
 *
 * * a key names a field exactly or case-insensitively (Go's folding: `ſ` is `s`, `K` is `k`); keys
 *   are read in object order, so of two naming one field the last wins;
 * * a value of the wrong JSON type is a violation (`typeInvalid`): Go refuses the whole object, and
 *   a definition it cannot decode can never run. The field keeps what it had;
 * * `null` leaves a string or a number as it was, empties a list, a map or a pointer, and is an
 *   invalid duration (Go hands it to the Duration's own decoder, which parses `""`);
 * * an object given twice for one struct field is decoded into the same struct (Go's merge), and a
 *   list into the elements of the one before; a map of structs gets fresh values per key.
 *
 * Numbers: Go's `int` takes an integer literal only (`1.0` and `1e3` are refused), while a number
 * here is already parsed. The API server writes an integral number back without a fraction, so
 * after it has stored the object the two agree; only an integral value in int64's range is taken.
 */

import { parseGoDuration } from './go/duration.ts'
import { goQuote } from './go/quote.ts'
import { isRecord, setOwn } from './kube/object.ts'
import type { JsonObject } from './kube/object.ts'
import { violation } from './messages/field-errors.ts'
import type { FieldViolation } from './messages/field-errors.ts'
import { MAX_NESTING } from './kube/nesting.ts'

/** A thvjson.Map: absent, or the object as written. */
type JsonMap = JsonObject | undefined

export interface ErrorHandling {
  readonly action?: string
  readonly retryCount?: number
}

export interface ResponseHandling {
  readonly action?: string
}

/** One workflow step; the inner `step` of a forEach is one too. */
export interface StepConfig {
  readonly id?: string
  readonly type?: string
  readonly tool?: string
  readonly arguments?: JsonMap
  readonly condition?: string
  readonly dependsOn?: readonly string[]
  readonly onError?: ErrorHandling
  readonly message?: string
  readonly schema?: JsonMap
  readonly onDecline?: ResponseHandling
  readonly onCancel?: ResponseHandling
  readonly defaultResults?: JsonMap
  readonly collection?: string
  readonly itemVar?: string
  readonly maxParallel?: number
  readonly maxIterations?: number
  readonly step?: StepConfig
}

export interface OutputProperty {
  readonly value?: string
  readonly properties?: Readonly<Record<string, OutputProperty>>
}

export interface CompositeToolConfig {
  readonly name?: string
  readonly description?: string
  readonly parameters?: JsonMap
  readonly timeout?: { readonly text: string; readonly nanoseconds: bigint }
  readonly steps?: readonly StepConfig[]
  readonly output?: { readonly properties?: Readonly<Record<string, OutputProperty>> }
}

export interface DecodedTool {
  readonly config: CompositeToolConfig
  /** What Go could not decode, each at its field. */
  readonly violations: readonly FieldViolation[]
  /** The fields of those violations: a rule reading one of them has nothing to say. */
  readonly unreadable: ReadonlySet<string>
}

/** The Go types the config is made of. */
type GoType =
  | 'string'
  | 'int'
  | 'bool'
  | 'duration'
  /** thvjson.Map: an object or null. */
  | 'map'
  /** thvjson.Any: anything. */
  | 'any'
  | { readonly list: GoType }
  /** map[string]T. */
  | { readonly dict: GoType }
  /** A struct; `pointer` when the field is `*T` (`null` empties it). */
  | { readonly struct: Fields; readonly pointer: boolean }

/** A struct's fields by JSON name (upstream's `json` tags). */
type Fields = Record<string, GoType>

const STRING_LIST: GoType = { list: 'string' }
const ERROR_HANDLING: Fields = { action: 'string', retryCount: 'int', retryDelay: 'duration' }
const RESPONSE_HANDLING: Fields = { action: 'string' }
const ANNOTATIONS: Fields = {
  title: 'string',
  readOnlyHint: 'bool',
  destructiveHint: 'bool',
  idempotentHint: 'bool',
  openWorldHint: 'bool',
}
const OUTPUT_PROPERTY: Fields = {
  type: 'string',
  description: 'string',
  value: 'string',
  default: 'any',
}
OUTPUT_PROPERTY.properties = { dict: { struct: OUTPUT_PROPERTY, pointer: false } }
const STEP: Fields = {
  id: 'string',
  type: 'string',
  tool: 'string',
  arguments: 'map',
  condition: 'string',
  dependsOn: STRING_LIST,
  onError: { struct: ERROR_HANDLING, pointer: true },
  message: 'string',
  schema: 'map',
  timeout: 'duration',
  onDecline: { struct: RESPONSE_HANDLING, pointer: true },
  onCancel: { struct: RESPONSE_HANDLING, pointer: true },
  defaultResults: 'map',
  collection: 'string',
  itemVar: 'string',
  maxParallel: 'int',
  maxIterations: 'int',
}
STEP.step = { struct: STEP, pointer: true }
const TOOL: GoType = {
  struct: {
    name: 'string',
    description: 'string',
    parameters: 'map',
    timeout: 'duration',
    steps: { list: { struct: STEP, pointer: false } },
    output: {
      struct: {
        properties: { dict: { struct: OUTPUT_PROPERTY, pointer: false } },
        required: STRING_LIST,
      },
      pointer: true,
    },
    annotations: { struct: ANNOTATIONS, pointer: true },
  },
  pointer: false,
}

const INT64_BOUND = 2 ** 63

/** Reads `raw`, the tool at `path`, as Go decodes it into a CompositeToolConfig. */
export function decodeCompositeTool(raw: unknown, path: string): DecodedTool {
  const decoder = new GoDecoder()
  const config = decoder.decode(TOOL, raw, path, undefined, 0)
  return {
    config: config ?? {},
    violations: decoder.violations,
    unreadable: decoder.unreadable,
  }
}

class GoDecoder {
  readonly violations: FieldViolation[] = []
  readonly unreadable = new Set<string>()

  /** `raw` decoded into `type` over what the field held (`existing`), as Go's decoder does. */
  decode(type: GoType, given: unknown, path: string, existing: unknown, depth: number): unknown {
    // What is not there at all reads as null (no JSON value is undefined; a caller's may be).
    const raw = given ?? null
    // Unreachable past the service's nesting limit, where every object it reads stops; a value
    // deeper still is left unread rather than risk the stack.
    if (depth > MAX_NESTING) return existing
    if (typeof type === 'string') return this.scalar(type, raw, path, existing)
    if ('list' in type) {
      if (raw === null) return undefined
      if (!Array.isArray(raw)) return this.refuse(path, raw, 'array', existing)
      const before: readonly unknown[] = Array.isArray(existing) ? existing : []
      return raw.map((item: unknown, i) =>
        this.decode(type.list, item, `${path}[${i}]`, before[i] ?? zero(type.list), depth + 1),
      )
    }
    if (raw === null) return 'dict' in type || type.pointer ? undefined : existing
    if (!isRecord(raw)) return this.refuse(path, raw, 'object', existing)
    if ('dict' in type) {
      const merged: JsonObject = isRecord(existing) ? { ...existing } : {}
      for (const [key, value] of Object.entries(raw))
        setOwn(merged, key, this.entry(type.dict, key, value, path, depth + 1))
      return merged
    }
    const struct: JsonObject = isRecord(existing) ? { ...existing } : {}
    for (const [key, value] of Object.entries(raw)) {
      const field = fieldNamed(type.struct, key)
      if (field === undefined) continue
      const fieldType = type.struct[field] as GoType
      struct[field] = this.decode(fieldType, value, `${path}.${field}`, struct[field], depth + 1)
    }
    return struct
  }

  /** The value of a map's `key`, decoded afresh (Go makes a new element for every key). */
  private entry(type: GoType, key: string, value: unknown, path: string, depth: number): unknown {
    if (!key.includes(']')) return this.decode(type, value, `${path}[${key}]`, zero(type), depth)
    // A key holding `]` cannot be written in a field path (apimachinery does not escape one
    // either), and a path that does not parse could never be ratcheted: what is wrong under
    // such a key is reported at the map, naming the key.
    const inner = new GoDecoder()
    const decoded = inner.decode(type, value, '', zero(type), depth)
    for (const found of inner.violations)
      this.reject({
        ...found,
        field: path,
        detail: `at ${goQuote(key)}${found.field}: ${found.detail}`,
      })
    return decoded
  }

  private scalar(type: GoType & string, raw: unknown, path: string, existing: unknown): unknown {
    switch (type) {
      case 'any':
        return raw === null ? undefined : raw
      case 'map':
        if (raw === null) return undefined
        return isRecord(raw) ? raw : this.refuse(path, raw, 'object', existing)
      case 'duration': {
        // Go hands null to the Duration's decoder too, which then parses "".
        const text = raw === null ? '' : raw
        if (typeof text !== 'string') return this.refuse(path, raw, 'string', existing)
        const parsed = parseGoDuration(text)
        if (parsed.ok) return { text, nanoseconds: parsed.nanoseconds }
        this.reject(violation.invalid(path, text, `invalid duration: ${parsed.error}`))
        return existing
      }
      case 'string':
        if (raw === null) return existing
        return typeof raw === 'string' ? raw : this.refuse(path, raw, 'string', existing)
      case 'bool':
        if (raw === null) return undefined
        return typeof raw === 'boolean' ? raw : this.refuse(path, raw, 'boolean', existing)
      case 'int':
        if (raw === null) return existing
        if (!Number.isInteger(raw)) return this.refuse(path, raw, 'integer', existing)
        if (Math.abs(raw as number) < INT64_BOUND) return raw
        this.reject(violation.typeInvalid(path, raw, 'must fit a 64-bit integer'))
        return existing
    }
  }

  /** A value of the wrong JSON type: the field keeps what it had. */
  private refuse(path: string, raw: unknown, expected: string, existing: unknown): unknown {
    this.reject(violation.typeInvalid(path, jsonTypeOf(raw), `must be of type ${expected}`))
    return existing
  }

  private reject(found: FieldViolation): void {
    this.violations.push(found)
    this.unreadable.add(found.field)
  }
}

/**
 * What Go decodes an element into when there was none: the type's zero value. The lists and maps
 * here hold strings or structs.
 */
function zero(type: GoType): unknown {
  return type === 'string' ? '' : {}
}

/** The field a JSON key names: its own name, or one equal under Go's case folding. */
function fieldNamed(fields: Fields, key: string): string | undefined {
  if (Object.hasOwn(fields, key)) return key
  let byFolded = FOLDED_NAMES.get(fields)
  if (byFolded === undefined) {
    byFolded = new Map(Object.keys(fields).map((name) => [foldName(name), name]))
    FOLDED_NAMES.set(fields, byFolded)
  }
  return byFolded.get(foldName(key))
}

/** Each struct's field names by their folded form, made on first use. */
const FOLDED_NAMES = new WeakMap<Fields, ReadonlyMap<string, string>>()

/**
 * encoding/json's foldName for the names that matter here: ASCII letters upper-cased, and the two
 * runes outside ASCII whose fold set holds an ASCII letter (U+017F ſ with S, U+212A Kelvin with K).
 * Every other rune folds to one outside ASCII, so it is kept: it can never match an ASCII name.
 * (JavaScript's own upper-casing would not do: it makes `ı` an `I` and `ß` an `SS`.)
 */
function foldName(name: string): string {
  if (ASCII.test(name)) return name.toUpperCase()
  let out = ''
  for (const char of name) {
    if (char === '\u017f') out += 'S'
    else if (char === '\u212a') out += 'K'
    else out += ASCII.test(char) ? char.toUpperCase() : char
  }
  return out
}

const ASCII = /^[^\u0080-\uffff]*$/

/** The JSON type of a value, as the API server names it in a type error. */
function jsonTypeOf(value: unknown): string {
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value === 'object' ? 'object' : typeof value
}
