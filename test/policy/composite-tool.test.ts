/**
 * The port of ToolHive's ValidateCompositeToolConfig (src/policy/composite-*.ts): upstream's
 * examples pass, every structural rule is a violation at its field (all of them at once, where
 * upstream stops at the first), what Go cannot decode is a violation at the field it cannot
 * decode, templates and JSON Schemas only warn, and the rule ratchets on UPDATE.
 */

import t from 'tap'
import {
  compositeToolDefinitionErrors,
  compositeToolFindings,
  inlineCompositeToolWarnings,
  validateCompositeToolDefinition,
} from '../../src/policy/composite-tool.ts'
import { TEMPLATE_BUDGET } from '../../src/policy/composite-defaults.ts'
import { MAX_NESTING } from '../../src/policy/kube/nesting.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { formatViolation } from '../../src/policy/messages/render.ts'
import type { ValidationInput } from '../../src/policy/result.ts'

type Json = Record<string, unknown>

/** The violations of `tool` at `spec`, rendered as users read them. */
const violations = (tool: unknown, path = 'spec') =>
  compositeToolFindings(tool, path).violations.map(formatViolation)
const warnings = (tool: unknown) => compositeToolFindings(tool, 'spec').warnings

/** A valid tool with `steps`, and whatever else `extra` sets. */
const tool = (steps: unknown[], extra: Json = {}): Json => ({
  name: 'deploy',
  description: 'Deploys',
  steps,
  ...extra,
})
const toolStep = (id: string, extra: Json = {}): Json => ({
  id,
  type: 'tool',
  tool: 'fetch',
  ...extra,
})
/** The violations of a tool made of `steps`. */
const stepViolations = (...steps: unknown[]) => violations(tool(steps))

// Upstream's examples (examples/operator/virtual-mcps/composite_tool_*.yaml of v0.63.0), as their
// specs read after the API server: types defaulted, unknown fields (failureMode, maxRetries) kept
// here, as the vmcp ignores them.
const SIMPLE: Json = {
  name: 'fetch_and_validate_data',
  description: 'Fetches data from a URL and validates it by echoing the content back',
  timeout: '3m',
  failureMode: 'abort',
  parameters: {
    type: 'object',
    properties: { url: { type: 'string', description: 'The URL to fetch data from' } },
    required: ['url'],
  },
  annotations: { title: 'Fetch and Validate Data', openWorldHint: true },
  steps: [
    toolStep('fetch_data', {
      arguments: { url: '{{.params.url}}' },
      timeout: '1m',
      onError: { action: 'abort', maxRetries: 2, retryDelay: '5s' },
    }),
    toolStep('validate_content', {
      tool: 'echo',
      arguments: { message: 'Fetched from {{.params.url}}: {{.steps.fetch_data.output.body}}' },
      dependsOn: ['fetch_data'],
      timeout: '30s',
    }),
    toolStep('confirm_success', {
      tool: 'echo',
      arguments: { message: 'Done at {{.timestamp}}' },
      dependsOn: ['validate_content'],
    }),
  ],
}
const COMPLEX: Json = {
  name: 'process_multi_source_data',
  description: 'Process data from multiple sources with parallel fetching and LLM analysis',
  timeout: '10m',
  parameters: {
    type: 'object',
    properties: { source_url_1: { type: 'string' }, source_url_2: { type: 'string' } },
    required: ['source_url_1', 'source_url_2'],
  },
  steps: [
    toolStep('fetch_source_1', { arguments: { url: '{{.params.source_url_1}}' } }),
    toolStep('fetch_source_2', { arguments: { url: '{{.params.source_url_2}}' } }),
    toolStep('validate_source_1', {
      tool: 'echo',
      arguments: { message: 'Source 1: {{.steps.fetch_source_1.output.body}}' },
      dependsOn: ['fetch_source_1'],
    }),
    toolStep('validate_source_2', {
      tool: 'echo',
      arguments: { message: 'Source 2: {{.steps.fetch_source_2.output.body}}' },
      dependsOn: ['fetch_source_2'],
    }),
    toolStep('calculate_metrics', {
      tool: 'add',
      arguments: { a: '100', b: 50 },
      dependsOn: ['validate_source_1', 'validate_source_2'],
    }),
    toolStep('llm_analysis', {
      tool: 'sampleLLM',
      arguments: {
        prompt:
          'Analyse {{.steps.fetch_source_1.output.body}} with {{.steps.calculate_metrics.output.result}}',
        max_tokens: '500',
      },
      dependsOn: ['validate_source_1', 'validate_source_2', 'calculate_metrics'],
      timeout: '3m',
    }),
    toolStep('generate_report', {
      tool: 'longecho',
      arguments: { message: 'Report: {{.steps.llm_analysis.output.response}}', duration: '5s' },
      dependsOn: ['llm_analysis'],
    }),
  ],
}
const ELICITATIONS: Json = {
  name: 'interactive_deployment',
  description: 'Interactive deployment workflow with user confirmations',
  timeout: '30m',
  parameters: { type: 'object', properties: { confirm: { type: 'boolean', default: true } } },
  steps: [
    toolStep('build_app', {
      tool: 'yardstick-streamable_echo',
      arguments: { input: 'BuildingApplicationNow' },
      onError: { action: 'abort' },
    }),
    {
      id: 'confirm_deployment',
      type: 'elicitation',
      message: 'Application built successfully. Proceed with deployment?',
      schema: {
        type: 'object',
        properties: { proceed: { type: 'boolean', description: 'Confirm deployment' } },
        required: ['proceed'],
      },
      dependsOn: ['build_app'],
      timeout: '10m',
      onDecline: { action: 'skip_remaining' },
      onCancel: { action: 'abort' },
    },
    {
      id: 'select_environment',
      type: 'elicitation',
      message: 'Please select the target deployment environment',
      schema: {
        type: 'object',
        properties: { environment: { type: 'string', enum: ['staging', 'production'] } },
      },
      dependsOn: ['confirm_deployment'],
      onDecline: { action: 'skip_remaining' },
      onCancel: { action: 'continue' },
    },
    toolStep('deploy_app', {
      tool: 'yardstick-streamable_echo',
      dependsOn: ['select_environment'],
      onError: { action: 'retry', retryCount: 2, retryDelay: '30s' },
    }),
  ],
}
/** A forEach, a skippable step with its defaults, and a structured output reading both. */
const FOR_EACH_AND_OUTPUT: Json = {
  name: 'fetch_all',
  description: 'Fetches every URL, then maybe summarises',
  steps: [
    {
      id: 'each',
      type: 'forEach',
      collection: '{{json .params.urls}}',
      itemVar: 'url',
      maxParallel: 50,
      maxIterations: 1000,
      step: { type: 'tool', tool: 'fetch', arguments: { url: '{{.forEach.url}}' } },
    },
    toolStep('summary', {
      tool: 'summarise',
      condition: '{{if .params.summarise}}true{{end}}',
      arguments: { text: '{{.steps.each.output.results | json}}' },
      defaultResults: { text: '' },
      dependsOn: ['each'],
    }),
    toolStep('notify', {
      tool: 'notify',
      onError: { action: 'continue' },
      arguments: { text: '{{.steps.summary.output.text}}' },
      defaultResults: { sent: false },
      dependsOn: ['summary'],
    }),
  ],
  output: {
    properties: {
      summary: {
        type: 'string',
        description: 'The summary',
        value: '{{.steps.summary.output.text}}',
      },
      delivery: {
        type: 'object',
        description: 'How it went',
        properties: {
          sent: { type: 'boolean', description: 'Sent', value: '{{.steps.notify.output.sent}}' },
        },
      },
    },
    required: ['summary'],
  },
}

t.test("upstream's examples and a forEach with defaults: no violation, no warning", async (t) => {
  for (const [name, spec] of Object.entries({ SIMPLE, COMPLEX, ELICITATIONS, FOR_EACH_AND_OUTPUT }))
    t.same(compositeToolFindings(spec, 'spec'), { violations: [], warnings: [] }, name)
})

t.test('the tool: name, description, steps, timeout', async (t) => {
  t.same(violations({}), [
    'spec.name: Required value',
    'spec.description: Required value',
    'spec.steps: Required value: must have at least one step',
  ])
  t.same(violations(undefined), violations({}), 'no spec at all reads as an empty one')
  t.same(violations(tool([], { name: '', timeout: '-1m30s' })), [
    'spec.name: Required value',
    'spec.steps: Required value: must have at least one step',
    'spec.timeout: Invalid value: "-1m30s": cannot be negative',
  ])
  t.same(violations(tool([toolStep('a')], { timeout: '0s' })), [])
  t.same(violations('a string', 'spec.config.compositeTools[2]'), [
    'spec.config.compositeTools[2]: Invalid value: "string": must be of type object',
  ])
})

t.test('step ids are required and unique', async (t) => {
  t.same(stepViolations(toolStep('a'), toolStep(''), { type: 'tool', tool: 'x' }, toolStep('a')), [
    'spec.steps[1].id: Required value',
    'spec.steps[2].id: Required value',
    'spec.steps[3].id: Duplicate value: "a"',
  ])
})

t.test('step types and what each needs', async (t) => {
  t.same(
    stepViolations(
      { id: 'a', type: 'shell', tool: 'x' },
      { id: 'b', tool: 'x', message: 'both' },
      { id: 'c', type: 'tool', tool: 'x', message: 'explicit, so fine' },
      { id: 'd' },
      { id: 'e', type: 'tool', tool: '-leading-dash' },
      { id: 'f', tool: 'has space' },
      { id: 'g', type: 'elicitation' },
      { id: 'h', tool: 'workload.tool_name-2' },
    ),
    [
      'spec.steps[0].type: Unsupported value: "shell": supported values: "tool", "elicitation", "forEach"',
      'spec.steps[1].type: Required value: a step with both tool and message needs an explicit type',
      'spec.steps[3].tool: Required value: when type is tool',
      'spec.steps[4].tool: Invalid value: "-leading-dash": must be a valid tool name (letters, digits, ".", "_" and "-", starting with a letter or digit)',
      'spec.steps[5].tool: Invalid value: "has space": must be a valid tool name (letters, digits, ".", "_" and "-", starting with a letter or digit)',
      'spec.steps[6].message: Required value: when type is elicitation',
    ],
  )
})

t.test('elicitation and error handlers', async (t) => {
  const ask = (extra: Json) => ({ id: 'ask', type: 'elicitation', message: 'Go?', ...extra })
  t.same(
    stepViolations(
      ask({ onDecline: {}, onCancel: { action: 'retry' } }),
      ask({ onDecline: { action: '' }, onCancel: { action: 'skip_remaining' } }),
      toolStep('c', { onError: { action: 'skip_remaining' } }),
      toolStep('d', { onError: { action: 'retry' } }),
      toolStep('e', { onError: { action: 'retry', retryCount: 0 } }),
      toolStep('f', { onError: { action: 'retry', retryCount: 1 } }),
      toolStep('g', { onError: {} }),
      // Handlers of a step that is not an elicitation are not read.
      toolStep('h', { onDecline: { action: 'nonsense' } }),
    ).map((line) => line.replace(/^spec\.steps\[(\d)\]/, '[$1]')),
    [
      '[1].id: Duplicate value: "ask"',
      '[0].onDecline.action: Required value',
      '[0].onCancel.action: Unsupported value: "retry": supported values: "abort", "continue", "skip_remaining"',
      '[1].onDecline.action: Required value',
      '[2].onError.action: Unsupported value: "skip_remaining": supported values: "abort", "continue", "retry"',
      '[3].onError.retryCount: Invalid value: 0: must be at least 1 when action is retry',
      '[4].onError.retryCount: Invalid value: 0: must be at least 1 when action is retry',
    ],
  )
})

t.test('forEach steps', async (t) => {
  const each = (extra: Json) => ({
    id: 'each',
    type: 'forEach',
    collection: '{{.params.items}}',
    step: { tool: 'fetch' },
    ...extra,
  })
  const one = (extra: Json) => stepViolations(each(extra))
  t.same(one({}), [], 'the inner type defaults to tool')
  t.same(one({ tool: 'fetch', message: 'hi', collection: '' }), [
    'spec.steps[0].tool: Forbidden: a forEach step must not have a tool',
    'spec.steps[0].message: Forbidden: a forEach step must not have a message',
    'spec.steps[0].collection: Required value: for forEach steps',
  ])
  t.same(one({ step: undefined }), ['spec.steps[0].step: Required value: for forEach steps'])
  t.same(one({ step: { type: 'elicitation', message: 'm' } }), [
    'spec.steps[0].step.type: Unsupported value: "elicitation": supported values: "tool"',
  ])
  t.same(one({ step: { type: 'tool' } }), [
    'spec.steps[0].step.tool: Required value: for tool inner steps',
  ])
  t.same(one({ step: { tool: 'a b' } }), [
    'spec.steps[0].step.tool: Invalid value: "a b": must be a valid tool name (letters, digits, ".", "_" and "-", starting with a letter or digit)',
  ])
  t.same(one({ itemVar: 'index' }), ['spec.steps[0].itemVar: Invalid value: "index": is reserved'])
  t.same(one({ itemVar: '2nd' }), [
    'spec.steps[0].itemVar: Invalid value: "2nd": must be a valid Go identifier',
  ])
  t.same(one({ itemVar: '_item2' }), [])
  t.same(one({ maxParallel: -1, maxIterations: -1 }), [
    'spec.steps[0].maxParallel: Invalid value: -1: must be non-negative',
    'spec.steps[0].maxIterations: Invalid value: -1: must be non-negative',
  ])
  t.same(one({ maxParallel: 51, maxIterations: 1001 }), [
    'spec.steps[0].maxParallel: Invalid value: 51: must be at most 50',
    'spec.steps[0].maxIterations: Invalid value: 1001: must be at most 1000',
  ])
  t.same(one({ maxParallel: 0, maxIterations: 0 }), [])
  t.same(
    stepViolations(toolStep('a', { maxParallel: 99, itemVar: 'index', step: {} })),
    [],
    'forEach fields of another step type are not read',
  )
})

t.test('dependsOn names known steps', async (t) => {
  t.same(stepViolations(toolStep('a'), toolStep('b', { dependsOn: ['a', 'c', ''] })), [
    'spec.steps[1].dependsOn[1]: Invalid value: "c": references unknown step',
    'spec.steps[1].dependsOn[2]: Invalid value: "": references unknown step',
  ])
})

t.test('dependency cycles: one violation per cycle, at its lowest step, naming it', async (t) => {
  t.same(stepViolations(toolStep('a', { dependsOn: ['a'] })), [
    'spec.steps[0].dependsOn: Forbidden: dependency cycle detected: a -> a',
  ])
  t.same(
    stepViolations(
      toolStep('tail', { dependsOn: ['b'] }),
      toolStep('b', { dependsOn: ['c'] }),
      toolStep('c', { dependsOn: ['d', 'ok'] }),
      toolStep('d', { dependsOn: ['b'] }),
      toolStep('ok'),
      toolStep('x', { dependsOn: ['y'] }),
      toolStep('y', { dependsOn: ['x', 'y'] }),
    ),
    [
      'spec.steps[1].dependsOn: Forbidden: dependency cycle detected: b -> c -> d -> b',
      'spec.steps[5].dependsOn: Forbidden: dependency cycle detected: x -> y -> x',
    ],
    'a step that only reaches a cycle is not on it; two cycles through one step are one violation',
  )
  t.same(
    stepViolations(
      toolStep('a', { dependsOn: ['b', 'c'] }),
      toolStep('b', { dependsOn: ['c'] }),
      toolStep('c', { dependsOn: ['a'] }),
    ),
    ['spec.steps[0].dependsOn: Forbidden: dependency cycle detected: a -> c -> a'],
    'the shortest cycle through it',
  )
  t.same(
    stepViolations(toolStep('a'), toolStep('a', { dependsOn: ['a'] })),
    ['spec.steps[1].id: Duplicate value: "a"'],
    'an id names its first step',
  )
  const ring = Array.from({ length: 30 }, (_, i) =>
    toolStep(`s${i}`, { dependsOn: [`s${(i + 1) % 30}`] }),
  )
  t.same(stepViolations(...ring), [
    'spec.steps[0].dependsOn: Forbidden: dependency cycle detected: s0 -> s1 -> s2 -> s3 -> s4 -> s5 -> s6 -> s7 -> s8 -> s9 -> … (20 more) -> s0',
  ])
})

t.test('a chain of 50,000 steps: no stack overflow, linear time', async (t) => {
  const count = 50_000
  const chain = Array.from({ length: count }, (_, i) =>
    toolStep(`s${i}`, { dependsOn: [`s${(i + 1) % count}`] }),
  )
  const started = performance.now()
  const found = stepViolations(...chain)
  t.equal(found.length, 1)
  t.match(found[0], /^spec\.steps\[0\]\.dependsOn: Forbidden: dependency cycle detected: s0 -> s1 /)
  t.ok(performance.now() - started < 5000, 'well within a webhook timeout')
  chain[count - 1] = toolStep(`s${count - 1}`)
  t.same(stepViolations(...chain), [], 'the chain without its closing edge')
})

t.test('defaultResults: a step that may be skipped gives what others read of it', async (t) => {
  const reader = (id: string, text: string) => toolStep(id, { arguments: { text } })
  t.same(
    stepViolations(
      toolStep('a', { condition: '{{.params.go}}' }),
      reader('b', '{{.steps.a.output.body}} {{.steps.a.output.code}}'),
      toolStep('c', { onError: { action: 'continue' }, defaultResults: { kept: 1 } }),
      toolStep('d', {
        message: 'x',
        type: 'elicitation',
        condition: '{{.steps.c.output.kept}} {{.steps.c.output.lost}}',
      }),
    ),
    [
      'spec.steps[0].defaultResults[body]: Required value: step "a" may be skipped and field "body" is referenced by step "b"',
      'spec.steps[0].defaultResults[code]: Required value: step "a" may be skipped and field "code" is referenced by step "b"',
      'spec.steps[2].defaultResults[lost]: Required value: step "c" may be skipped and field "lost" is referenced by step "d"',
    ],
  )
  t.same(
    stepViolations(
      toolStep('a', { onError: { action: 'abort' } }),
      reader('b', '{{.steps.a.output.body}}'),
    ),
    [],
    'a step that is never skipped needs no default',
  )
  t.same(
    stepViolations(
      toolStep('a', { condition: '{{.steps.a.output.again}}', defaultResults: { again: null } }),
      reader(
        'b',
        '{{.steps.a.output}} {{.steps.a.outputs.x}} {{.params.a.output.x}} {{.steps.zz.output.x}}',
      ),
    ),
    [],
    'a default of null counts; reads that are not of a field of a step output need none',
  )
  const readers = ['b', 'c', 'd', 'e', 'f'].map((id) => reader(id, '{{.steps.a.output.x}}'))
  const skipped = toolStep('a', { condition: 'true' })
  const output = (value: string) => ({ output: { properties: { x: { type: 'string', value } } } })
  t.same(violations(tool([skipped, ...readers.slice(0, 1)], output('{{.steps.a.output.x}}'))), [
    'spec.steps[0].defaultResults[x]: Required value: step "a" may be skipped and field "x" is referenced by step "b" and the output',
  ])
  t.same(violations(tool([skipped, ...readers.slice(0, 2)], output('{{.steps.a.output.x}}'))), [
    'spec.steps[0].defaultResults[x]: Required value: step "a" may be skipped and field "x" is referenced by step "b", step "c" and the output',
  ])
  t.same(violations(tool([skipped, ...readers], output('{{.steps.a.output.x}}'))), [
    'spec.steps[0].defaultResults[x]: Required value: step "a" may be skipped and field "x" is referenced by step "b", step "c", step "d" and 3 more',
  ])
  const nested = {
    output: {
      properties: {
        outer: {
          type: 'object',
          properties: {
            inner: {
              type: 'object',
              properties: { leaf: { type: 'string', value: '{{.steps.a.output.deep}}' } },
            },
          },
        },
      },
    },
  }
  t.same(violations(tool([skipped], nested)), [
    'spec.steps[0].defaultResults[deep]: Required value: step "a" may be skipped and field "deep" is referenced by the output',
  ])
  t.same(
    stepViolations(skipped, {
      id: 'each',
      type: 'forEach',
      collection: '{{.steps.a.output.items}}',
      step: { tool: 't', arguments: { x: '{{.steps.a.output.y}}' } },
    }),
    [],
    "upstream does not read a forEach's collection or inner step for this rule",
  )
})

t.test('defaultResults with an id used twice: read as upstream keys them, by id', async (t) => {
  t.same(
    stepViolations(
      toolStep('a', { defaultResults: { x: 1 } }),
      toolStep('a', { condition: '{{.params.go}}' }),
      toolStep('b', { arguments: { text: '{{.steps.a.output.x}}' } }),
    ),
    [
      'spec.steps[1].id: Duplicate value: "a"',
      'spec.steps[1].defaultResults[x]: Required value: step "a" may be skipped and field "x" is referenced by step "b"',
    ],
    'skippable as one of them is; the last one holds the defaults read',
  )
  t.same(
    stepViolations(
      toolStep('a', { condition: '{{.params.go}}' }),
      toolStep('a', { defaultResults: { x: 1 } }),
      toolStep('b', { arguments: { text: '{{.steps.a.output.x}}' } }),
    ),
    ['spec.steps[1].id: Duplicate value: "a"'],
  )
})

t.test('templates that do not parse are warnings and read nothing', async (t) => {
  const broken = '{{.steps.a.output.x'
  const found = compositeToolFindings(
    tool(
      [
        toolStep('a', { condition: '{{.params.go}}' }),
        toolStep('b', { arguments: { text: broken, n: 3 }, condition: broken, message: broken }),
        {
          id: 'each',
          type: 'forEach',
          collection: broken,
          step: { tool: 't', arguments: { x: broken } },
        },
      ],
      { output: { properties: { x: { type: 'string', value: broken } } } },
    ),
    'spec',
  )
  t.same(found.violations, [], 'no default is asked for: the templates read nothing')
  t.same(
    found.warnings.map((warning) =>
      warning.replace(/: invalid template: .*; /, ': invalid template: …; '),
    ),
    [
      'spec.steps[1].arguments[text]',
      'spec.steps[1].condition',
      'spec.steps[1].message',
      'spec.steps[2].collection',
      'spec.steps[2].step.arguments[x]',
      'spec.output.properties[x].value',
    ].map((field) => `${field}: invalid template: …; the vmcp will refuse it at start-up`),
  )
  t.same(
    warnings(
      tool([toolStep('a')], { output: { properties: { x: { type: 'string', value: broken } } } }),
    ),
    [],
    'output values are parsed only for the defaults rule, which runs only with a skippable step',
  )
  t.same(warnings(tool([toolStep('a', { arguments: { x: '{{nope .params.x}}' } })])).length, 1)
  t.same(
    warnings(
      tool([toolStep('a', { arguments: { x: '{{json .params.x | quote}} {{fromJson "{}"}}' } })]),
    ),
    [],
  )
})

t.test('JSON Schemas only warn', async (t) => {
  const withParameters = (parameters: unknown) =>
    compositeToolFindings(tool([toolStep('a')], { parameters }), 'spec')
  t.same(withParameters({}), { violations: [], warnings: [] })
  t.same(withParameters({ properties: {} }).warnings, [
    'spec.parameters: must have a "type" field ("object" for a JSON Schema); the vmcp will refuse it at start-up',
  ])
  t.same(withParameters({ type: ['object'] }).warnings, [
    'spec.parameters.type: must be a string; the vmcp will refuse it at start-up',
  ])
  t.same(withParameters({ type: 'array' }).warnings, [
    'spec.parameters.type: must be "object", not "array"; the vmcp will refuse it at start-up',
  ])
  t.same(withParameters({ type: 'object', properties: { x: { type: 'strin' } } }).warnings, [
    'spec.parameters: invalid JSON Schema at /properties/x/type: must be equal to one of the allowed values; the vmcp may refuse it at start-up',
  ])
  t.same(withParameters({ type: 'object', required: 'x' }).violations, [], 'never a violation')
  const ask = (schema: unknown) =>
    warnings(tool([{ id: 'ask', type: 'elicitation', message: 'm', schema }]))
  t.same(ask({ type: 'object', minProperties: -1 }), [
    'spec.steps[0].schema: invalid JSON Schema at /minProperties: must be >= 0; the vmcp may refuse it at start-up',
  ])
  t.same(ask({ type: 'object' }), [])
  t.same(ask({}), [])
  t.same(
    ask({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 7 }),
    [],
    'a meta-schema ajv lacks: no verdict',
  )
  t.same(ask({ type: 'object', $schema: 3 }), [], 'a $schema that is not a string: no verdict')
})

t.test('read as Go decodes it: wrong JSON types are violations at their field', async (t) => {
  t.same(
    violations(
      tool(
        [
          toolStep('a', {
            arguments: ['x'],
            dependsOn: 'b',
            onError: 'retry',
            maxParallel: 1.5,
            timeout: 30,
            defaultResults: 'x',
          }),
          toolStep('b', {
            type: 'forEach',
            tool: '',
            collection: 5,
            step: 'fetch',
            dependsOn: [7, 'a'],
          }),
          'a step',
          toolStep('d', {
            maxIterations: 2 ** 64,
            schema: [],
            onDecline: { action: 3 },
            condition: {},
            message: true,
          }),
          toolStep('e', { tool: '' }),
        ],
        {
          parameters: 'object',
          annotations: { readOnlyHint: 'yes', title: 1 },
          output: { properties: { p: { type: 1, default: { any: ['thing'] } } }, required: 'p' },
        },
      ),
    ),
    [
      'spec.steps[0].arguments: Invalid value: "array": must be of type object',
      'spec.steps[0].dependsOn: Invalid value: "string": must be of type array',
      'spec.steps[0].onError: Invalid value: "string": must be of type object',
      'spec.steps[0].maxParallel: Invalid value: "number": must be of type integer',
      'spec.steps[0].timeout: Invalid value: "integer": must be of type string',
      'spec.steps[0].defaultResults: Invalid value: "string": must be of type object',
      'spec.steps[1].collection: Invalid value: "integer": must be of type string',
      'spec.steps[1].step: Invalid value: "string": must be of type object',
      'spec.steps[1].dependsOn[0]: Invalid value: "integer": must be of type string',
      'spec.steps[2]: Invalid value: "string": must be of type object',
      'spec.steps[3].maxIterations: Invalid value: 18446744073709552000: must fit a 64-bit integer',
      'spec.steps[3].schema: Invalid value: "array": must be of type object',
      'spec.steps[3].onDecline.action: Invalid value: "integer": must be of type string',
      'spec.steps[3].condition: Invalid value: "object": must be of type string',
      'spec.steps[3].message: Invalid value: "boolean": must be of type string',
      'spec.parameters: Invalid value: "string": must be of type object',
      'spec.annotations.readOnlyHint: Invalid value: "string": must be of type boolean',
      'spec.annotations.title: Invalid value: "integer": must be of type string',
      'spec.output.properties[p].type: Invalid value: "integer": must be of type string',
      'spec.output.required: Invalid value: "string": must be of type array',
      'spec.steps[4].tool: Required value: when type is tool',
    ],
    'the rules that would read those fields say nothing more (no "collection is required", no "step is required", no unknown step "")',
  )
})

t.test('read as Go decodes it: durations and null', async (t) => {
  t.same(
    stepViolations(
      toolStep('a', { timeout: '5d' }),
      toolStep('b', { timeout: null }),
      toolStep('c', { timeout: '1h30m' }),
    ),
    [
      'spec.steps[0].timeout: Invalid value: "5d": invalid duration: time: unknown unit "d" in duration "5d"',
      'spec.steps[1].timeout: Invalid value: "": invalid duration: time: invalid duration ""',
    ],
  )
  t.same(
    violations({
      name: 'n',
      description: null,
      parameters: null,
      output: null,
      annotations: { readOnlyHint: null },
      steps: [
        null,
        {
          id: 'b',
          tool: null,
          type: null,
          onError: null,
          arguments: null,
          dependsOn: null,
          maxParallel: null,
          step: null,
          defaultResults: null,
        },
      ],
    }),
    [
      'spec.description: Required value',
      'spec.steps[0].id: Required value',
      'spec.steps[0].tool: Required value: when type is tool',
      'spec.steps[1].tool: Required value: when type is tool',
    ],
    'null leaves a field empty; a null step is an empty one',
  )
  t.same(
    violations(
      tool([toolStep('a')], { output: { properties: { p: { value: 'v', default: null } } } }),
    ),
    [],
  )
  t.same(
    violations(tool([toolStep('a', { retry: 1, OnError: { retryCount: 0 } })])),
    [],
    'unknown keys are ignored',
  )
})

t.test('read as Go decodes it: keys match case-insensitively, the last one wins', async (t) => {
  const each = (step: Json, extra: Json = {}) =>
    stepViolations({ id: 'each', type: 'forEach', collection: '{{.x}}', step, ...extra })
  t.same(each({ TOOL: 'fetch' }), [])
  t.same(each({ tool: 'fetch', Tool: 'a b' }), [
    'spec.steps[0].step.tool: Invalid value: "a b": must be a valid tool name (letters, digits, ".", "_" and "-", starting with a letter or digit)',
  ])
  t.same(each({ Tool: 'a b', tool: 'fetch' }), [])
  t.same(
    each({ tool: 'fetch' }, { step: undefined, ſtep: { tool: 'a b' } }).length,
    1,
    'ſ folds to s',
  )
  t.same(each({ tool: 'fetch', type: 'tool', TYPE: 'elicitation' }).length, 1)
  t.same(each({ tool: 'fetch' }, { MAXPARALLEL: 51 }), [
    'spec.steps[0].maxParallel: Invalid value: 51: must be at most 50',
  ])
  t.same(each({ tool: 'fetch' }, { maxParallel: 1, '\u212aeep': 1, maxparalleL: -2 }), [
    'spec.steps[0].maxParallel: Invalid value: -2: must be non-negative',
  ])
  t.same(
    each({ tool: 'fetch' }, { ıtemVar: 'index' }),
    [],
    'ı is not i: Go folds it to nothing ASCII',
  )
  t.same(each({ tool: 'fetch' }, { maxİterations: -1 }), [], 'nor is İ')
})

t.test(
  'read as Go decodes it: a struct given twice is merged, a list decoded over the last',
  async (t) => {
    t.same(
      stepViolations(
        toolStep('a', { onError: { action: 'retry' }, OnError: { retryDelay: '1s' } }),
      ),
      [
        'spec.steps[0].onError.retryCount: Invalid value: 0: must be at least 1 when action is retry',
      ],
    )
    t.same(
      violations(tool([toolStep('a', { dependsOn: ['a'] })], { Steps: [{ dependsOn: [null] }] })),
      ['spec.steps[0].dependsOn: Forbidden: dependency cycle detected: a -> a'],
    )
    t.same(violations(tool([toolStep('a')], { Steps: [null, toolStep('b')] })), [])
    t.same(
      violations(
        tool([toolStep('a', { condition: 'x' })], {
          output: {
            properties: { p: { value: '{{.steps.a.output.f}}' } },
            Properties: { q: { value: 'plain' } },
          },
        }),
      ),
      [
        'spec.steps[0].defaultResults[f]: Required value: step "a" may be skipped and field "f" is referenced by the output',
      ],
      'a map merges its keys',
    )
    t.same(
      violations(
        tool([toolStep('a', { condition: 'x' })], {
          output: {
            properties: { p: { value: '{{.steps.a.output.f}}' } },
            Properties: { p: { type: 'string' } },
          },
        }),
      ),
      [],
      "but a key's struct is decoded afresh",
    )
  },
)

t.test('a map key no field path can hold is named at its map', async (t) => {
  t.same(
    violations(tool([toolStep('a')], { output: { properties: { 'a]b': { type: 1 }, ok: {} } } })),
    ['spec.output.properties: Invalid value: "integer": at "a]b".type: must be of type string'],
  )
})

t.test('nesting past the service limit is left unread', async (t) => {
  let inner: Json = { tool: 'a b' }
  for (let depth = 0; depth < MAX_NESTING; depth++) inner = { tool: 'fetch', step: inner }
  t.same(stepViolations({ id: 'each', type: 'forEach', collection: '{{.x}}', step: inner }), [])
  let properties: Json = { leaf: { type: 1 } }
  for (let depth = 0; depth < MAX_NESTING; depth++)
    properties = { p: { type: 'object', properties } }
  t.same(violations(tool([toolStep('a')], { output: { properties } })), [])
})

// ---------------------------------------------------------------------------------------------
// The rule

const definition = (spec: unknown, metadata: Json = {}): KubeObject => ({
  apiVersion: 'toolhive.stacklok.dev/v1beta1',
  kind: 'VirtualMCPCompositeToolDefinition',
  metadata: { name: 'deploy', namespace: 'team', ...metadata },
  spec,
})
const judged = (
  operation: ValidationInput['operation'],
  object?: KubeObject,
  oldObject?: KubeObject,
) => {
  const result = validateCompositeToolDefinition({ operation, object, oldObject })
  return { violations: result.violations.map(formatViolation), warnings: result.warnings }
}
const CYCLE = [toolStep('a', { dependsOn: ['b'] }), toolStep('b', { dependsOn: ['a'] })]
const CYCLE_LINE = 'spec.steps[0].dependsOn: Forbidden: dependency cycle detected: a -> b -> a'

t.test('the rule: CREATE is judged in full', async (t) => {
  t.same(judged('CREATE', definition(SIMPLE)), { violations: [], warnings: [] })
  t.same(judged('CREATE', definition(tool(CYCLE, { parameters: { type: 'array' } }))), {
    violations: [CYCLE_LINE],
    warnings: [
      'spec.parameters.type: must be "object", not "array"; the vmcp will refuse it at start-up',
    ],
  })
  t.same(judged('DELETE', undefined, definition(tool(CYCLE))), { violations: [], warnings: [] })
  t.same(judged('CREATE', undefined), { violations: [], warnings: [] })
})

t.test('the rule: UPDATE denies only what it brings', async (t) => {
  const stored = definition(tool([...CYCLE, toolStep('c')]))
  const edited = definition(
    tool([...CYCLE, toolStep('c', { tool: 'other' })], { description: 'Changed' }),
  )
  t.same(judged('UPDATE', edited, stored), {
    violations: [],
    warnings: [
      'spec.steps[0].dependsOn: pre-existing violation kept: Forbidden: dependency cycle detected: a -> b -> a',
    ],
  })
  const worse = definition(tool([...CYCLE, toolStep('c', { tool: '' })]))
  t.same(judged('UPDATE', worse, stored).violations, [
    'spec.steps[2].tool: Required value: when type is tool',
  ])
  const newCycle = definition(
    tool([toolStep('a', { dependsOn: ['a'] }), toolStep('b'), toolStep('c')]),
  )
  t.same(judged('UPDATE', newCycle, stored).violations, [
    'spec.steps[0].dependsOn: Forbidden: dependency cycle detected: a -> a',
  ])
})

t.test(
  'the rule: an UPDATE that leaves the spec alone, or of an object being deleted, passes',
  async (t) => {
    const stored = definition(tool([...CYCLE, toolStep('', { tool: '' })]), { finalizers: ['x'] })
    const relabelled = definition(structuredClone(stored.spec), { labels: { team: 'a' } })
    const expected = [
      'spec.steps[2].id: pre-existing violation kept: Required value',
      'spec.steps[2].tool: pre-existing violation kept: Required value: when type is tool',
      `spec.steps[0].dependsOn: pre-existing violation kept: Forbidden: dependency cycle detected: a -> b -> a`,
    ]
    t.same(judged('UPDATE', relabelled, stored), { violations: [], warnings: expected })
    const deleting = definition(tool([toolStep('a', { dependsOn: ['a'] })]), {
      deletionTimestamp: '2026-01-01T00:00:00Z',
    })
    t.same(judged('UPDATE', deleting, stored), {
      violations: [],
      warnings: [
        'spec.steps[0].dependsOn: kept while the object is deleted: Forbidden: dependency cycle detected: a -> a',
      ],
    })
  },
)

t.test('compositeToolDefinitionErrors: one line per violation, for the status', async (t) => {
  t.same(compositeToolDefinitionErrors(definition(SIMPLE)), [])
  t.same(
    compositeToolDefinitionErrors(definition(tool([...CYCLE, toolStep('a')], { parameters: {} }))),
    ['spec.steps[2].id: Duplicate value: "a"', CYCLE_LINE],
  )
  t.same(compositeToolDefinitionErrors({ kind: 'VirtualMCPCompositeToolDefinition' }), [
    'spec.name: Required value',
    'spec.description: Required value',
    'spec.steps: Required value: must have at least one step',
  ])
})

t.test('inline tools of a VirtualMCPServer: warnings, each tool introduced', async (t) => {
  const server = (compositeTools: unknown): KubeObject => ({
    kind: 'VirtualMCPServer',
    spec: { config: { compositeTools } },
  })
  t.same(inlineCompositeToolWarnings(server([SIMPLE, COMPLEX])), [])
  t.same(inlineCompositeToolWarnings({ kind: 'VirtualMCPServer' }), [])
  t.same(inlineCompositeToolWarnings(server({ not: 'a list' })), [])
  t.same(
    inlineCompositeToolWarnings(
      server([
        SIMPLE,
        { ...SIMPLE, steps: CYCLE },
        tool([toolStep('a', { arguments: { x: '{{nope}}' } })], { name: SIMPLE.name }),
        'oops',
      ]),
    ).map((line) => line.replace(/: invalid template: .*; /, ': invalid template: …; ')),
    [
      'spec.config.compositeTools[1] is invalid: the operator will fail this VirtualMCPServer (Valid=False)',
      'spec.config.compositeTools[1].name: Duplicate value: "fetch_and_validate_data"',
      'spec.config.compositeTools[1].steps[0].dependsOn: Forbidden: dependency cycle detected: a -> b -> a',
      'spec.config.compositeTools[2] is invalid: the operator will fail this VirtualMCPServer (Valid=False)',
      'spec.config.compositeTools[2].name: Duplicate value: "fetch_and_validate_data"',
      'spec.config.compositeTools[2].steps[0].arguments[x]: invalid template: …; the vmcp will refuse it at start-up',
      'spec.config.compositeTools[3] is invalid: the operator will fail this VirtualMCPServer (Valid=False)',
      'spec.config.compositeTools[3]: Invalid value: "string": must be of type object',
    ],
  )
})

t.test(
  'a {{template}} call without an argument is warned about: upstream crashes on it',
  async (t) => {
    const found = compositeToolFindings(
      tool([toolStep('a', { condition: '{{define "t"}}x{{end}}{{template "t"}}' })]),
      'spec',
    )
    t.same(found.violations, [], 'Go parses it, so nothing is denied')
    t.same(found.warnings, [
      `spec.steps[0].condition: {{template}} without an argument: the vmcp's defaultResults check crashes on it`,
    ])
  },
)

t.test(
  "templates past the tool's parse budget are warned about once and read for nothing",
  async (t) => {
    const long = `{{.steps.a.output.x}}${' '.repeat(TEMPLATE_BUDGET)}`
    const found = compositeToolFindings(
      tool([
        toolStep('a', { condition: '{{.params.go}}' }),
        toolStep('b', { arguments: { one: long, two: long } }),
      ]),
      'spec',
    )
    t.same(found.violations, [], 'the default it would ask for is not asked for: no false denial')
    t.same(found.warnings, [
      `spec.steps[1].arguments[one]: not checked: this tool's templates pass 128 KiB; from here on none is parsed`,
    ])
    t.same(
      compositeToolFindings(
        tool([
          toolStep('a', { condition: '{{.params.go}}' }),
          toolStep('b', { message: '{{.steps.a.output.x}}' }),
        ]),
        'spec',
      ).violations.map((v) => v.field),
      ['spec.steps[0].defaultResults[x]'],
      'within the budget the same read is a violation',
    )
  },
)
