/**
 * A port of what ToolHive (v0.63.0) does with a composite tool's Go templates: Go's text/template
 * Parse (text/template/parse of Go 1.27, which v0.63.0 requires; 1.26 differs only in knowing
 * fewer Unicode letters), with the default delimiters and the given functions besides the
 * builtins, which accepts or rejects a template; and ToolHive's ExtractReferences, which lists the
 * field paths (`.steps.a.output.b`) the parsed templates name. Runs on the UTF-8 bytes
 * (bytes.ts); errors carry Go's wording (`template: validation:1: function "x" not defined`), but
 * quote as Go 1.26 does (quote.ts).
 */

import { fromGoBytes, toGoBytes } from './bytes.ts'
import { goQuoteBytes } from './quote.ts'
import { Lexer, describeItem } from './template-lex.ts'
import type { Item, ItemType } from './template-lex.ts'
import { charConstantError, numberError, unquote } from './template-literals.ts'

export type GoTemplateResult =
  | {
      readonly ok: true
      readonly references: readonly string[]
      /**
       * ToolHive's ExtractReferences panics on this template instead of returning the references:
       * its walk dereferences the absent pipeline of a `{{template "name"}}` (Parse alone, as in
       * ValidateTemplate, accepts it).
       */
      readonly extractPanics?: true
    }
  | { readonly ok: false; readonly error: string }

/** text/template's builtin functions, known to every template. */
const BUILTINS = [
  'and',
  'call',
  'html',
  'index',
  'slice',
  'js',
  'len',
  'not',
  'or',
  'print',
  'printf',
  'println',
  'urlquery',
  'eq',
  'ge',
  'gt',
  'le',
  'lt',
  'ne',
]

/** Go's maxStackDepth: how deep parentheses may nest. */
const MAX_PAREN_DEPTH = 10000

/**
 * `template.New(name).Funcs(functions).Parse(text)`; on success, the sorted distinct field paths
 * that ToolHive's templates.ExtractReferences walks to in every template the text defines. The
 * name is only in errors, and in that a `{{define}}` of the same name is a second definition.
 */
export function parseGoTemplate(
  text: string,
  functions: readonly string[],
  name = 'validation',
): GoTemplateResult {
  const names = new Set([...BUILTINS, ...functions].map(toGoBytes))
  const context: ParseContext = {
    parseName: name,
    lexer: new Lexer(toGoBytes(text), !names.has('break'), !names.has('continue')),
    functions: names,
    trees: new Map(),
  }
  try {
    const top = new Tree(toGoBytes(name), context)
    run(top.parseTop())
    top.add()
  } catch (error) {
    if (error instanceof TemplateError) return { ok: false, error: error.message }
    throw error
  }
  const { references, panics } = walk(context.trees.values())
  return panics ? { ok: true, references, extractPanics: true } : { ok: true, references }
}

// The parse tree, as far as the parser's checks and the reference walk look at it.

interface ListNode {
  readonly type: 'list'
  readonly nodes: Node[]
}

interface PipeNode {
  readonly type: 'pipe'
  /** The commands; the variables it declares (`$x := …`) hold no references. */
  readonly commands: CommandNode[]
}

interface CommandNode {
  readonly type: 'command'
  readonly args: readonly [Node, ...Node[]]
}

/** The parsed forms of a literal and of `.`, with their text for errors. */
type LiteralType = 'bool' | 'dot' | 'nil' | 'number' | 'string'

type Node =
  | ListNode
  | PipeNode
  | CommandNode
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'action'; readonly pipe: PipeNode }
  /** `.a.b`: the path from dot. */
  | { readonly type: 'field'; readonly ident: readonly string[] }
  /** `(…).a.b` or `fn.a`: fields of something else. */
  | { readonly type: 'chain'; readonly node: Node; readonly fields: readonly string[] }
  /** `$x.a.b`, not a reference to ToolHive. */
  | { readonly type: 'variable'; readonly ident: readonly string[] }
  | { readonly type: 'identifier' }
  | { readonly type: LiteralType; readonly text: string }
  | {
      readonly type: 'if' | 'range' | 'with'
      readonly pipe: PipeNode
      readonly list: ListNode
      readonly elseList: ListNode | undefined
    }
  | { readonly type: 'template'; readonly pipe: PipeNode | undefined }
  | { readonly type: 'break' | 'continue' }
  /** What ends a list, returned to the control that opened it. */
  | { readonly type: 'end' | 'else' }

const LITERAL_TYPES: ReadonlySet<Node['type']> = new Set<LiteralType>([
  'bool',
  'dot',
  'nil',
  'number',
  'string',
])

/** The parser's state shared by the top template and those it defines. */
interface ParseContext {
  readonly parseName: string
  readonly lexer: Lexer
  readonly functions: ReadonlySet<string>
  /** The templates defined so far by name (byte strings), as parse.Tree.treeSet. */
  readonly trees: Map<string, ListNode>
}

/** A parse error, thrown inside this module only and turned into a result at its edge. */
class TemplateError extends Error {}

/**
 * A step of the recursive descent, written as a generator so that nesting takes heap, not call
 * stack: Go accepts `{{if}}`s nested by the ten thousand, which would overflow Node's stack. A
 * task yields the subtask it calls (see `call`) and `run` resumes it with the subtask's result.
 */
type Task<T> = Generator<Task<unknown>, T, unknown>

/** Runs `task` to its end, each nested call on an explicit stack; a throw ends them all. */
function run(task: Task<unknown>): void {
  const stack = [task]
  let result: unknown
  for (let top = stack.at(-1); top !== undefined; top = stack.at(-1)) {
    const step = top.next(result)
    if (step.done === true) {
      stack.pop()
      result = step.value
    } else {
      stack.push(step.value)
      result = undefined
    }
  }
}

/** `yield* call(subtask)` inside a task: the subtask's result, computed by `run`. */
function* call<T>(subtask: Task<T>): Task<T> {
  return (yield subtask) as T
}

const NO_ITEM: Item = { type: 'error', value: '', line: 0 }

/** One template being parsed: the top one, a {{define}} or a {{block}}, as Go's parse.Tree. */
class Tree {
  private root: ListNode = { type: 'list', nodes: [] }
  /** Go's three-token look-ahead: token[0] is always the last one the lexer gave. */
  private readonly token: [Item, Item, Item] = [NO_ITEM, NO_ITEM, NO_ITEM]
  private peekCount = 0
  /** The variables in scope, `$` always. */
  private vars = ['$']
  /** The line of the action being parsed, for errors that end it elsewhere. */
  private actionLine = 0
  private rangeDepth = 0
  private parenDepth = 0
  private name: string
  private readonly context: ParseContext

  constructor(name: string, context: ParseContext) {
    this.name = name
    this.context = context
  }

  // The token stream.

  private next(): Item {
    if (this.peekCount > 0) this.peekCount--
    else this.token[0] = this.context.lexer.nextItem()
    return this.item(this.peekCount)
  }

  private backup(): void {
    this.peekCount++
  }

  private backup2(t1: Item): void {
    this.token[1] = t1
    this.peekCount = 2
  }

  private backup3(t2: Item, t1: Item): void {
    this.token[1] = t1
    this.token[2] = t2
    this.peekCount = 3
  }

  private peek(): Item {
    if (this.peekCount > 0) return this.item(this.peekCount - 1)
    this.peekCount = 1
    this.token[0] = this.context.lexer.nextItem()
    return this.token[0]
  }

  private nextNonSpace(): Item {
    let token: Item
    do token = this.next()
    while (token.type === 'space')
    return token
  }

  private peekNonSpace(): Item {
    const token = this.nextNonSpace()
    this.backup()
    return token
  }

  private item(index: number): Item {
    return this.token[index as 0 | 1 | 2]
  }

  // Errors.

  private errorf(message: string): never {
    throw new TemplateError(`template: ${this.context.parseName}:${this.item(0).line}: ${message}`)
  }

  private expect(expected: ItemType, context: string): Item {
    const token = this.nextNonSpace()
    if (token.type !== expected) this.unexpected(token, context)
    return token
  }

  private unexpected(token: Item, context: string): never {
    if (token.type !== 'error') this.errorf(`unexpected ${describeItem(token)} in ${context}`)
    let extra = ''
    if (this.actionLine !== 0 && this.actionLine !== token.line) {
      extra = ` in action started at ${this.context.parseName}:${this.actionLine}`
      // "unclosed action in action started at" would say action twice.
      if (token.value.endsWith(' action')) extra = extra.slice(' in action'.length)
    }
    this.errorf(`${token.value}${extra}`)
  }

  // The grammar.

  /** The top-level template, which alone may hold {{define}}s; runs to EOF. */
  *parseTop(): Task<void> {
    while (this.peek().type !== 'EOF') {
      if (this.peek().type === 'leftDelim') {
        const delim = this.next()
        if (this.nextNonSpace().type === 'define') {
          yield* call(new Tree('definition', this.context).parseDefinition())
          continue
        }
        this.backup2(delim)
      }
      const node = yield* call(this.textOrAction())
      if (node.type === 'end' || node.type === 'else') this.errorf(`unexpected {{${node.type}}}`)
      this.root.nodes.push(node)
    }
  }

  /** Installs the template in the set: a second definition may only be blank. */
  add(): void {
    const existing = this.context.trees.get(this.name)
    if (existing === undefined || isEmptyTree(existing)) {
      this.context.trees.set(this.name, this.root)
      return
    }
    if (!isEmptyTree(this.root)) {
      this.errorf(`template: multiple definition of template ${goQuoteBytes(this.name)}`)
    }
  }

  /** `{{define "name"}} … {{end}}`, the keyword read. */
  private *parseDefinition(): Task<void> {
    const context = 'define clause'
    const name = this.nextNonSpace()
    if (name.type !== 'string' && name.type !== 'rawString') this.unexpected(name, context)
    this.name = this.unquote(name.value)
    this.expect('rightDelim', context)
    const { list, next } = yield* call(this.itemList())
    if (next.type !== 'end') this.errorf(`unexpected {{${next.type}}} in ${context}`)
    this.root = list
    this.add()
  }

  /** textOrAction* up to an {{end}} or {{else}}, which is returned beside the list. */
  private *itemList(): Task<{ list: ListNode; next: Node & { type: 'end' | 'else' } }> {
    const list: ListNode = { type: 'list', nodes: [] }
    while (this.peekNonSpace().type !== 'EOF') {
      const node = yield* call(this.textOrAction())
      if (node.type === 'end' || node.type === 'else') return { list, next: node }
      list.nodes.push(node)
    }
    return this.errorf('unexpected EOF')
  }

  private *textOrAction(): Task<Node> {
    const token = this.nextNonSpace()
    if (token.type === 'text') return { type: 'text', text: token.value }
    if (token.type !== 'leftDelim') this.unexpected(token, 'input')
    this.actionLine = token.line
    try {
      return yield* call(this.action())
    } finally {
      this.actionLine = 0
    }
  }

  /** After `{{`: a control keyword, or a pipeline. */
  private *action(): Task<Node> {
    const token = this.nextNonSpace()
    switch (token.type) {
      case 'block':
        return yield* call(this.blockControl())
      case 'break':
      case 'continue':
        return this.loopControl(token.type)
      case 'else':
        return this.elseControl()
      case 'end':
        this.expect('rightDelim', 'end')
        return { type: 'end' }
      case 'if':
      case 'range':
      case 'with':
        return yield* call(this.control(token.type))
      case 'template':
        return yield* call(this.templateControl())
    }
    this.backup()
    // Variables declared here stay in scope until the enclosing {{end}}.
    return { type: 'action', pipe: yield* call(this.pipeline('command', 'rightDelim')) }
  }

  private loopControl(keyword: 'break' | 'continue'): Node {
    const token = this.nextNonSpace()
    if (token.type !== 'rightDelim') this.unexpected(token, `{{${keyword}}}`)
    if (this.rangeDepth === 0) this.errorf(`{{${keyword}}} outside {{range}}`)
    return { type: keyword }
  }

  /** `{{else}}`, or the `{{else` of `{{else if …}}` and `{{else with …}}`, the keyword pending. */
  private elseControl(): Node {
    const peek = this.peekNonSpace()
    if (peek.type !== 'if' && peek.type !== 'with') this.expect('rightDelim', 'else')
    return { type: 'else' }
  }

  /** `{{if|range|with pipeline}} list [{{else}} list] {{end}}`, the keyword read. */
  private *control(keyword: 'if' | 'range' | 'with'): Task<Node> {
    const varsBefore = this.vars.length
    try {
      const pipe = yield* call(this.pipeline(keyword, 'rightDelim'))
      if (keyword === 'range') this.rangeDepth++
      const { list, next } = yield* call(this.itemList())
      if (keyword === 'range') this.rangeDepth--
      let elseList: ListNode | undefined
      if (next.type === 'else') {
        // `{{if a}}x{{else if b}}y{{end}}` is `{{if a}}x{{else}}{{if b}}y{{end}}{{end}}`: the
        // inner if takes the one {{end}}. The same for with.
        if ((keyword === 'if' || keyword === 'with') && this.peek().type === keyword) {
          this.next()
          elseList = { type: 'list', nodes: [yield* call(this.control(keyword))] }
        } else {
          const rest = yield* call(this.itemList())
          if (rest.next.type !== 'end') this.errorf(`expected end; found {{${rest.next.type}}}`)
          elseList = rest.list
        }
      }
      return { type: keyword, pipe, list, elseList }
    } finally {
      this.vars.length = varsBefore
    }
  }

  /** `{{block "name" pipeline}} list {{end}}`: defines the template and calls it. */
  private *blockControl(): Task<Node> {
    const context = 'block clause'
    const name = this.templateName(this.nextNonSpace(), context)
    const pipe = yield* call(this.pipeline(context, 'rightDelim'))
    const block = new Tree(name, this.context)
    const { list, next } = yield* call(block.itemList())
    if (next.type !== 'end') this.errorf(`unexpected {{${next.type}}} in ${context}`)
    block.root = list
    block.add()
    return { type: 'template', pipe }
  }

  /** `{{template "name" [pipeline]}}`. */
  private *templateControl(): Task<Node> {
    const context = 'template clause'
    this.templateName(this.nextNonSpace(), context)
    if (this.nextNonSpace().type === 'rightDelim') return { type: 'template', pipe: undefined }
    this.backup()
    return { type: 'template', pipe: yield* call(this.pipeline(context, 'rightDelim')) }
  }

  private templateName(token: Item, context: string): string {
    if (token.type !== 'string' && token.type !== 'rawString') this.unexpected(token, context)
    return this.unquote(token.value)
  }

  private unquote(token: string): string {
    return unquote(token) ?? this.errorf('invalid syntax')
  }

  /** `[declarations] command ('|' command)*` up to `end`. */
  private *pipeline(context: string, end: ItemType): Task<PipeNode> {
    let declaredBeforeComma = 0
    for (;;) {
      const v = this.peekNonSpace()
      if (v.type !== 'variable') break
      this.next()
      // `$x foo` needs three tokens of look-ahead: `foo` says $x is an argument, not declared.
      const afterVariable = this.peek()
      const next = this.peekNonSpace()
      if (next.type === 'assign' || next.type === 'declare') {
        this.nextNonSpace()
        this.vars.push(v.value)
      } else if (next.type === 'char' && next.value === ',') {
        this.nextNonSpace()
        declaredBeforeComma++
        this.vars.push(v.value)
        // `range $i, $x := …`: a second variable, declared like the first.
        if (context === 'range' && declaredBeforeComma < 2) {
          const second = this.peekNonSpace().type
          if (second === 'variable' || second === 'rightDelim' || second === 'rightParen') continue
          this.errorf('range can only initialize variables')
        }
        this.errorf(`too many declarations in ${context}`)
      } else if (afterVariable.type === 'space') {
        this.backup3(v, afterVariable)
      } else {
        this.backup2(v)
      }
      break
    }
    const pipe: PipeNode = { type: 'pipe', commands: [] }
    for (;;) {
      const token = this.nextNonSpace()
      if (token.type === end) break
      if (!OPERAND_START.has(token.type)) this.unexpected(token, context)
      this.backup()
      pipe.commands.push(yield* call(this.command()))
    }
    this.checkPipeline(pipe, context)
    return pipe
  }

  private checkPipeline(pipe: PipeNode, context: string): void {
    if (pipe.commands.length === 0) this.errorf(`missing value for ${context}`)
    // Only the first command may start with a value that cannot be called.
    pipe.commands.forEach((command, i) => {
      if (i > 0 && LITERAL_TYPES.has(command.args[0].type)) {
        this.errorf(`non executable command in pipeline stage ${i + 1}`)
      }
    })
  }

  /** Space-separated operands up to `|` (consumed) or a right delimiter or paren (left). */
  private *command(): Task<CommandNode> {
    const args: Node[] = []
    for (;;) {
      this.peekNonSpace()
      const operand = yield* call(this.operand())
      if (operand !== undefined) args.push(operand)
      const token = this.next()
      if (token.type === 'space') continue
      if (token.type === 'rightDelim' || token.type === 'rightParen') this.backup()
      else if (token.type !== 'pipe') this.unexpected(token, 'operand')
      break
    }
    // Dead in Go too: the pipeline calls a command at a token that starts an operand.
    const [first, ...rest] = args
    if (first === undefined) return this.errorf('empty command')
    return { type: 'command', args: [first, ...rest] }
  }

  /** A term and the `.field`s right after it. */
  private *operand(): Task<Node | undefined> {
    const node = yield* call(this.term())
    if (node === undefined || this.peek().type !== 'field') return node
    const fields: string[] = []
    while (this.peek().type === 'field') fields.push(this.next().value.slice(1))
    switch (node.type) {
      case 'field':
      case 'variable':
        return { type: node.type, ident: [...node.ident, ...fields] }
      case 'bool':
      case 'dot':
      case 'nil':
      case 'number':
      case 'string':
        return this.errorf(`unexpected . after term ${goQuoteBytes(node.text)}`)
    }
    return { type: 'chain', node, fields }
  }

  /** A literal, function, `.`, `.Field`, `$var` or `(pipeline)`; undefined for anything else. */
  private *term(): Task<Node | undefined> {
    const token = this.nextNonSpace()
    switch (token.type) {
      case 'identifier':
        if (!this.context.functions.has(token.value)) {
          this.errorf(`function ${goQuoteBytes(token.value)} not defined`)
        }
        return { type: 'identifier' }
      case 'dot':
        return { type: 'dot', text: '.' }
      case 'nil':
        return { type: 'nil', text: 'nil' }
      case 'variable':
        return this.useVariable(token.value)
      case 'field':
        return { type: 'field', ident: [token.value.slice(1)] }
      case 'bool':
        return { type: 'bool', text: token.value }
      case 'charConstant':
      case 'complex':
      case 'number': {
        const error =
          token.type === 'charConstant'
            ? charConstantError(token.value)
            : numberError(token.value, token.type === 'complex')
        if (error !== undefined) this.errorf(error)
        return { type: 'number', text: token.value }
      }
      case 'leftParen':
        if (this.parenDepth >= MAX_PAREN_DEPTH) this.errorf('max expression depth exceeded')
        this.parenDepth++
        try {
          return yield* call(this.pipeline('parenthesized pipeline', 'rightParen'))
        } finally {
          this.parenDepth--
        }
      case 'string':
      case 'rawString':
        this.unquote(token.value)
        return { type: 'string', text: token.value }
    }
    this.backup()
    return undefined
  }

  private useVariable(name: string): Node {
    if (!this.vars.includes(name)) this.errorf(`undefined variable ${goQuoteBytes(name)}`)
    return { type: 'variable', ident: [name] }
  }
}

/** The tokens that can start an operand, hence a command. */
const OPERAND_START: ReadonlySet<ItemType> = new Set<ItemType>([
  'bool',
  'charConstant',
  'complex',
  'dot',
  'field',
  'identifier',
  'number',
  'nil',
  'rawString',
  'string',
  'variable',
  'leftParen',
])

/** unicode.IsSpace, which bytes.TrimSpace trims. */
const BLANK = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/

/** parse.IsEmptyTree for a template's top list: nothing but space. */
function isEmptyTree(list: ListNode): boolean {
  return list.nodes.every((node) => node.type === 'text' && BLANK.test(fromGoBytes(node.text)))
}

/**
 * ToolHive's walkNode over every template: `.` + the path of each field, and of the fields
 * after a chain (whose own operand is walked too). Variables (`$.steps.a`) are not references.
 */
function walk(trees: Iterable<ListNode>): { references: string[]; panics: boolean } {
  const found = new Set<string>()
  let panics = false
  const pending: Node[] = [...trees]
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    switch (node.type) {
      case 'list':
        for (const child of node.nodes) pending.push(child)
        break
      case 'action':
        pending.push(node.pipe)
        break
      case 'pipe':
        for (const command of node.commands) pending.push(command)
        break
      case 'command':
        for (const arg of node.args) pending.push(arg)
        break
      case 'field':
        found.add(`.${node.ident.join('.')}`)
        break
      case 'chain':
        pending.push(node.node)
        found.add(`.${node.fields.join('.')}`)
        break
      case 'if':
      case 'range':
      case 'with':
        pending.push(node.pipe, node.list, ...(node.elseList ? [node.elseList] : []))
        break
      case 'template':
        // Go's walk reads the commands of the pipeline without checking there is one.
        if (node.pipe) pending.push(node.pipe)
        else panics = true
        break
    }
  }
  // Byte order, as Go would sort them.
  return { references: [...found].sort().map(fromGoBytes), panics }
}
