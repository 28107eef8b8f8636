/**
 * One YAML document (a chunk of kubectl's split) as the JSON kubectl makes of it: sigs.k8s.io/yaml
 * decodes it with go-yaml v2 into Go values, turns map keys into strings and writes JSON. The
 * yaml library parses the text (its own schema off: every scalar arrives as text, with its style
 * and tag), and this file does what go-yaml and sigs.k8s.io/yaml do with the result:
 * * scalars are resolved by `load-scalar.ts`;
 * * `<<` merges a mapping, an alias of one, or a list of them, at its place in the mapping: keys
 *   before it are overwritten, keys after it win, and in a list the earlier mapping wins;
 * * an alias is decoded again where it is used, with go-yaml's guard against alias bombs
 *   (excessive aliasing: a share of the decoded nodes that shrinks as the document grows);
 * * keys become JSON keys as sigs.k8s.io/yaml writes them (`yes` is "true", `1.5` "1.5" at
 *   float32 precision); a null key, a uint64 key, and a mapping or list as a key are refused;
 * * only the first document of the chunk is read (go-yaml stops there), and a directive
 *   (`%YAML 1.1`) is refused: after kubectl's split it never has the `---` it needs.
 * The loader's own limits are added: no repeated key in a mapping (nor two keys that become the
 * same JSON key: Go keeps one of them at random), no integer a JavaScript number cannot hold,
 * no nesting deeper than MAX_NESTING, checked while parsing, before the composer recurses.
 */

import { Composer, Lexer, Parser, isAlias, isMap, isPair, isScalar, isSeq } from 'yaml'
import type { Alias, CST, Node, ParsedNode, Scalar } from 'yaml'
import { MAX_NESTING } from '../policy/kube/nesting.ts'
import { isMergeKey, resolveScalar } from './load-scalar.ts'
import type { GoScalar } from './load-scalar.ts'

/** Why a document cannot be read, and where in its text (an offset) when that is known. */
export class DocumentError extends Error {
  override name = 'DocumentError'
  readonly offset: number | undefined
  constructor(message: string, offset?: number) {
    super(message)
    this.offset = offset
  }
}

export const NESTING_MESSAGE = `nested deeper than ${MAX_NESTING} levels`

/** The JSON value of the first document in `text` (null for none), or a DocumentError. */
export function yamlDocumentValue(text: string): unknown {
  // go-yaml reads a lone CR and NEL (U+0085) as line breaks, LF in content; the yaml library
  // reads them as text. LS and PS (U+2028, U+2029) are line breaks to go-yaml too, but kept
  // as text in content: no replacement reads them the same, so they are refused.
  const separator = /[\u2028\u2029]/.exec(text)
  if (separator !== null) {
    throw new DocumentError(
      'a line or paragraph separator (U+2028, U+2029): kubectl reads it as a line break',
      separator.index,
    )
  }
  const tokens = parseTokens(text.replace(/[\r\u0085]/g, '\n'))
  const composer = new Composer({ schema: 'failsafe', resolveKnownTags: false, uniqueKeys: false })
  for (const document of composer.compose(tokens, true)) {
    const error = document.errors[0]
    if (error !== undefined) throw new DocumentError(error.message, error.pos[0])
    return new GoDecoder().decode(document.contents)
  }
  return null
}

const COLLECTIONS = new Set(['block-map', 'block-seq', 'flow-collection'])

/** The lexer's markers: not text of the document. */
const MARKERS = new Set(['\x02', '\x18', '\x1f'])

/**
 * The parser's tokens, refusing as soon as it opens a collection too deep, and refusing what
 * go-yaml (a YAML 1.1 scanner) reads otherwise than this YAML 1.2 lexer: see `refuseLexeme`.
 */
function parseTokens(text: string): CST.Token[] {
  const parser = new Parser()
  const tokens: CST.Token[] = []
  const state: LexState = { offset: 0, flow: 0, plainEnd: -1, scalarNext: false }
  for (const lexeme of new Lexer().lex(text)) {
    refuseLexeme(text, lexeme, state)
    for (const token of parser.next(yaml11Escapes(lexeme))) tokens.push(token)
    // The parser's stack holds the collections open at this point, in one array: cheap to count.
    if (parser.stack.length > MAX_NESTING) {
      const open = parser.stack.filter((token) => COLLECTIONS.has(token.type)).length
      if (open > MAX_NESTING) throw new DocumentError(NESTING_MESSAGE, state.offset)
    }
  }
  for (const token of parser.end()) tokens.push(token)
  const directive = tokens.find((token) => token.type === 'directive' || token.type === 'document')
  if (directive?.type === 'directive') {
    throw new DocumentError(
      `a directive (${directive.source.trim()}): kubectl cannot read it, its --- line starts a new document there`,
      directive.offset,
    )
  }
  return tokens
}

interface LexState {
  /** Where the lexeme starts in the text. */
  offset: number
  /** How deep in flow collections. */
  flow: number
  /** Where the last lexeme ended, when it was a plain scalar. */
  plainEnd: number
  /** The lexeme is a plain scalar (the lexer's marker came before it). */
  scalarNext: boolean
}

/**
 * Refuses a lexeme go-yaml reads otherwise (or not at all):
 * * a tag not followed by a space or a line end (`[!!str]`): go-yaml refuses it;
 * * in a flow collection, a plain scalar with `?` in it or starting with `:` (`[?x]` is a
 *   mapping to go-yaml, `[a?b]` an error), and `key:` right before `,`, `]` or `}` (a string
 *   `key:` to go-yaml, a key with no value here);
 * * in a double-quoted scalar, `\/` (not a YAML 1.1 escape) and a surrogate code point
 *   (`\ud800`, even as a pair): go-yaml refuses both.
 */
function refuseLexeme(text: string, lexeme: string, state: LexState): void {
  if (MARKERS.has(lexeme)) {
    state.scalarNext = lexeme === '\x1f'
    return
  }
  const offset = state.offset
  const plain = state.scalarNext && !lexeme.startsWith('"') && !lexeme.startsWith("'")
  state.scalarNext = false
  state.offset += lexeme.length
  const refuse = (why: string): never => {
    throw new DocumentError(why, offset)
  }
  const after = text[offset + lexeme.length] ?? '\n'
  if (lexeme.startsWith('!') && !' \t\n\r'.includes(after)) {
    refuse(`a tag must be followed by a space or a line end for kubectl: ${lexeme}${after}`)
  } else if (lexeme === '{' || lexeme === '[') state.flow++
  else if (lexeme === '}' || lexeme === ']') state.flow = Math.max(0, state.flow - 1)
  else if (state.flow > 0 && plain && (lexeme.includes('?') || lexeme.startsWith(':'))) {
    refuse(`kubectl reads a ? or a leading : in a flow collection otherwise: quote ${lexeme}`)
  } else if (
    state.flow > 0 &&
    lexeme === ':' &&
    state.plainEnd === offset &&
    ',[]{}'.includes(after)
  ) {
    refuse('kubectl reads a key: right before , ] or } as a string: put a space after the colon')
  } else if (lexeme.startsWith('"')) {
    refuseEscapes(lexeme, offset)
  }
  state.plainEnd = plain && lexeme !== '' ? offset + lexeme.length : -1
}

/**
 * A double-quoted scalar with YAML 1.1's `\\'` (an apostrophe, which YAML 1.2 dropped) written as
 * `\\x27`, so the yaml library reads it. Later offsets on that line shift by two: only the
 * column of an error after it can be off.
 */
function yaml11Escapes(lexeme: string): string {
  if (!lexeme.startsWith('"') || !lexeme.includes("\\'")) return lexeme
  return lexeme.replace(/\\(.)/gs, (escape, c: string) => (c === "'" ? '\\x27' : escape))
}

function refuseEscapes(quoted: string, offset: number): void {
  for (let i = quoted.indexOf('\\'); i !== -1; i = quoted.indexOf('\\', i + 2)) {
    const escape = quoted[i + 1]
    const length = escape === 'u' ? 4 : escape === 'U' ? 8 : 0
    const code = length > 0 ? Number.parseInt(quoted.slice(i + 2, i + 2 + length), 16) : 0
    if (escape === '/' || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) {
      throw new DocumentError(
        `kubectl cannot read the escape ${quoted.slice(i, i + 2 + length)} (YAML 1.1 has no \\/, and no surrogate code points)`,
        offset + i,
      )
    }
  }
}

/** A step of the decoding, kept on an explicit stack (documents may nest MAX_NESTING deep). */
type Task =
  | { readonly do: 'node'; readonly node: unknown; readonly into: Slot; readonly depth: number }
  | {
      readonly do: 'pairs'
      readonly node: MapNode
      readonly object: JsonObject
      readonly depth: number
    }
  | {
      readonly do: 'merge'
      readonly node: unknown
      readonly object: JsonObject
      readonly depth: number
    }
  | {
      readonly do: 'merged'
      readonly node: unknown
      readonly object: JsonObject
      readonly depth: number
    }
  | {
      readonly do: 'set'
      readonly pair: PairNode
      readonly state: PairState
      readonly keys: Set<string>
      readonly object: JsonObject
    }
  | { readonly do: 'leave'; readonly alias: Alias }

type JsonObject = Record<string, unknown>
type MapNode = { readonly items: unknown[] }
type PairNode = { readonly key: unknown; readonly value: unknown }
/** Where a decoded value goes: a container's slot, or a pair's key or value. */
type Slot = {
  readonly holder: Record<string | number, unknown>
  readonly at: string | number
  readonly key?: true
}
interface PairState {
  key?: unknown
  value?: unknown
}

/**
 * go-yaml's decoder (its order, its counts for the alias guard, its errors) over the yaml
 * library's nodes, producing JSON values directly.
 */
class GoDecoder {
  private decodeCount = 0
  private aliasCount = 0
  private aliasDepth = 0
  private readonly expanding = new Set<Alias>()
  private readonly targets = new Map<Alias, unknown>()
  /** Each JSON object's keys with the Go key each came from (`i:1`, `s:1`). */
  private readonly goKeys = new WeakMap<JsonObject, Map<string, string>>()
  private nanKeys = 0

  decode(root: unknown): unknown {
    this.findTargets(root)
    const holder: Record<string, unknown> = {}
    const tasks: Task[] = [{ do: 'node', node: root, into: { holder, at: 'root' }, depth: 0 }]
    for (let task = tasks.pop(); task !== undefined; task = tasks.pop()) this.step(task, tasks)
    return holder['root']
  }

  /** Each alias's node: the latest with its anchor before it, in the text's order. */
  private findTargets(root: unknown): void {
    const anchors = new Map<string, unknown>()
    const pending: unknown[] = [root]
    for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
      if (isAlias(node)) {
        this.targets.set(node, anchors.get(node.source))
        continue
      }
      if (typeof node !== 'object' || node === null) continue // an empty node
      const anchor = (node as { anchor?: string }).anchor
      if (anchor !== undefined) anchors.set(anchor, node)
      if (isMap(node)) {
        for (const pair of [...node.items].reverse()) pending.push(pair.value, pair.key)
      } else if (isSeq(node)) {
        for (const item of [...node.items].reverse()) pending.push(item)
      }
    }
  }

  private step(task: Task, tasks: Task[]): void {
    switch (task.do) {
      case 'node':
        this.node(task.node, task.into, task.depth, tasks)
        break
      case 'pairs':
        this.pairs(task.node, task.object, task.depth, tasks)
        break
      case 'merge':
        this.merge(task.node, task.object, task.depth, tasks)
        break
      case 'merged':
        this.merged(task.node, task.object, task.depth, tasks)
        break
      case 'set':
        this.set(task.pair, task.state, task.keys, task.object)
        break
      case 'leave':
        this.aliasDepth--
        this.expanding.delete(task.alias)
    }
  }

  /** go-yaml's unmarshal(): counts every node decoded, and refuses an alias bomb. */
  private count(): void {
    this.decodeCount++
    if (this.aliasDepth > 0) this.aliasCount++
    if (
      this.aliasCount > 100 &&
      this.decodeCount > 1000 &&
      this.aliasCount / this.decodeCount > allowedAliasRatio(this.decodeCount)
    ) {
      throw new DocumentError('document contains excessive aliasing')
    }
  }

  private node(node: unknown, into: Slot, depth: number, tasks: Task[]): void {
    this.count()
    if (isAlias(node)) {
      this.enter(node, tasks)
      tasks.push({ do: 'node', node: this.targets.get(node), into, depth })
      return
    }
    if (isMap(node) || isSeq(node)) {
      if (into.key === true) {
        // go-yaml decodes the key, then refuses it; its content does not matter.
        throw new DocumentError(
          'a mapping or list as a mapping key: kubectl cannot read it',
          offsetOf(node),
        )
      }
      if (depth >= MAX_NESTING) throw new DocumentError(NESTING_MESSAGE, offsetOf(node))
    }
    if (isMap(node)) {
      const object: JsonObject = Object.create(null) as JsonObject
      into.holder[into.at] = object
      tasks.push({ do: 'pairs', node, object, depth })
    } else if (isSeq(node)) {
      const array: unknown[] = new Array(node.items.length)
      into.holder[into.at] = array
      for (let i = node.items.length - 1; i >= 0; i--) {
        tasks.push({
          do: 'node',
          node: node.items[i],
          into: { holder: array as unknown as Slot['holder'], at: i },
          depth: depth + 1,
        })
      }
    } else {
      const scalar = this.scalar(node)
      into.holder[into.at] = into.key === true ? scalar : jsonValue(scalar, node)
    }
  }

  private scalar(node: unknown): GoScalar {
    // An empty node (`{a}`, `a:`) is go-yaml's empty plain scalar: null.
    if (!isScalar(node)) return { type: 'null' }
    try {
      return resolveScalar(sourceOf(node), node.tag ?? undefined, node.type === 'PLAIN')
    } catch (error) {
      throw new DocumentError((error as Error).message, offsetOf(node))
    }
  }

  /** Follows an alias: refused inside itself, as go-yaml refuses it. */
  private enter(alias: Alias, tasks: Task[]): void {
    if (this.targets.get(alias) === undefined) {
      throw new DocumentError(`unknown anchor '${alias.source}' referenced`, offsetOf(alias))
    }
    if (this.expanding.has(alias)) {
      throw new DocumentError(`anchor '${alias.source}' value contains itself`, offsetOf(alias))
    }
    this.expanding.add(alias)
    this.aliasDepth++
    tasks.push({ do: 'leave', alias })
  }

  /** A mapping's pairs in order, into `object` (its own, or the one it is merged into). */
  private pairs(node: MapNode, object: JsonObject, depth: number, tasks: Task[]): void {
    const keys = new Set<string>()
    for (let i = node.items.length - 1; i >= 0; i--) {
      const pair = node.items[i]
      if (!isPair(pair)) continue
      const key = pair.key
      if (isScalar(key) && isMergeKey(sourceOf(key), key.tag ?? undefined, key.type === 'PLAIN')) {
        tasks.push({ do: 'merge', node: pair.value, object, depth })
        continue
      }
      const state: PairState = {}
      const holder = state as Slot['holder']
      tasks.push({ do: 'set', pair, state, keys, object })
      tasks.push({ do: 'node', node: pair.value, into: { holder, at: 'value' }, depth: depth + 1 })
      tasks.push({
        do: 'node',
        node: key,
        into: { holder, at: 'key', key: true },
        depth: depth + 1,
      })
    }
  }

  /** go-yaml's merge(): a mapping, an alias of one, or a list of those, the last first. */
  private merge(node: unknown, object: JsonObject, depth: number, tasks: Task[]): void {
    if (isMap(node) || isAlias(node)) {
      tasks.push({ do: 'merged', node, object, depth })
    } else if (isSeq(node)) {
      // Pushed first to last, so decoded last to first: the earlier mapping has the last word.
      for (const item of node.items) tasks.push({ do: 'merged', node: item, object, depth })
    } else {
      throw new DocumentError(
        'map merge requires map or sequence of maps as the value',
        offsetOf(node),
      )
    }
  }

  /** One mapping (or alias of one) decoded into the mapping it is merged into. */
  private merged(node: unknown, object: JsonObject, depth: number, tasks: Task[]): void {
    const target = isAlias(node) ? this.targets.get(node) : node
    if (!isMap(target)) {
      throw new DocumentError(
        'map merge requires map or sequence of maps as the value',
        offsetOf(node),
      )
    }
    this.count()
    if (isAlias(node)) {
      this.enter(node, tasks)
      tasks.push({ do: 'merged', node: target, object, depth })
      return
    }
    tasks.push({ do: 'pairs', node: target, object, depth })
  }

  /** A decoded pair into its object, its key as sigs.k8s.io/yaml writes it. */
  private set(pair: PairNode, state: PairState, keys: Set<string>, object: JsonObject): void {
    const [key, goKey] = this.jsonKey(state.key as GoScalar, pair.key)
    if (keys.has(key)) {
      throw new DocumentError(
        `Map keys must be unique: ${JSON.stringify(key)} repeated`,
        offsetOf(pair.key),
      )
    }
    keys.add(key)
    let known = this.goKeys.get(object)
    if (known === undefined) {
      known = new Map<string, string>()
      this.goKeys.set(object, known)
    }
    const earlier = known.get(key)
    if (earlier !== undefined && earlier !== goKey) {
      throw new DocumentError(
        `two keys become ${JSON.stringify(key)} in JSON (kubectl keeps either one)`,
        offsetOf(pair.key),
      )
    }
    known.set(key, goKey)
    object[key] = state.value
  }

  /** The JSON key of a Go map key, and that Go key as `type:value` (equal only if Go's are). */
  private jsonKey(key: GoScalar, node: unknown): [string, string] {
    switch (key.type) {
      case 'string':
        return [key.value, `s:${key.value}`]
      case 'bool':
        return [String(key.value), `b:${key.value}`]
      case 'int':
        return [String(key.value), `i:${key.value}`]
      case 'float':
        // Every NaN is a key of its own in a Go map.
        return [
          goFloat32Text(key.value),
          `f:${Number.isNaN(key.value) ? `nan${this.nanKeys++}` : key.value}`,
        ]
      case 'null':
        throw new DocumentError('a null mapping key: kubectl cannot read it', offsetOf(node))
      case 'uint':
        throw new DocumentError(
          `a mapping key beyond int64 (${key.value}): kubectl cannot read it`,
          offsetOf(node),
        )
    }
  }
}

/** go-yaml's allowance for aliasing: 99% of a small document's nodes, 10% of a huge one's. */
function allowedAliasRatio(decodeCount: number): number {
  if (decodeCount <= 400_000) return 0.99
  if (decodeCount >= 4_000_000) return 0.1
  return 0.99 - 0.89 * ((decodeCount - 400_000) / 3_600_000)
}

/** A scalar's JSON value as kubectl holds it; refused where JSON or a number here cannot. */
function jsonValue(scalar: GoScalar, node: unknown): unknown {
  switch (scalar.type) {
    case 'null':
      return null
    case 'bool':
    case 'string':
      return scalar.value
    case 'float':
      if (!Number.isFinite(scalar.value)) {
        throw new DocumentError(
          `${scalar.value > 0 ? '.inf' : scalar.value < 0 ? '-.inf' : '.nan'} is no number JSON can hold (kubectl refuses it)`,
          offsetOf(node),
        )
      }
      return scalar.value
    case 'uint':
      // kubectl reads an integer past int64 as a float64: the same number as here.
      return Number(scalar.value)
    case 'int': {
      const value = Number(scalar.value)
      if (BigInt(value) !== scalar.value) {
        throw new DocumentError(
          `the integer ${scalar.value} is beyond 2^53: it cannot be read exactly here`,
          offsetOf(node),
        )
      }
      return value
    }
  }
}

/**
 * Go's strconv.FormatFloat(x, 'g', -1, 32), as sigs.k8s.io/yaml writes a float key: the
 * shortest digits that read back as the same float32, in %e form below 1e-4 or from 1e6 on.
 */
export function goFloat32Text(x: number): string {
  const single = Math.fround(x)
  if (Number.isNaN(single)) return '.nan'
  if (!Number.isFinite(single)) return single > 0 ? '.inf' : '-.inf'
  if (single === 0) return Object.is(single, -0) ? '-0' : '0'
  let digits = ''
  let exponent = 0
  for (let precision = 1; precision <= 9; precision++) {
    const [mantissa = '', power = '0'] = single.toExponential(precision - 1).split('e')
    if (Math.fround(Number(`${mantissa}e${power}`)) === single) {
      digits = mantissa.replace(/^-/, '').replace('.', '')
      exponent = Number(power)
      break
    }
  }
  const sign = single < 0 ? '-' : ''
  if (exponent < -4 || exponent >= 6) {
    const fraction = digits.length > 1 ? `.${digits.slice(1)}` : ''
    const power = Math.abs(exponent).toString().padStart(2, '0')
    return `${sign}${digits[0] ?? ''}${fraction}e${exponent < 0 ? '-' : '+'}${power}`
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`
  const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0')
  const fraction = digits.slice(exponent + 1)
  return `${sign}${whole}${fraction === '' ? '' : `.${fraction}`}`
}

function sourceOf(node: Scalar): string {
  return typeof node.source === 'string' ? node.source : String(node.value)
}

function offsetOf(node: unknown): number | undefined {
  return (node as Partial<ParsedNode> | Node | null)?.range?.[0] ?? undefined
}
