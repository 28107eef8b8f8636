import t from 'tap'
import { join } from 'node:path'
import { parseAllDocuments } from 'yaml'
import { runCli } from '../helpers/cli.ts'
import { VECTOR_CHECKSUM } from '../helpers/objects.ts'

const CONFIGMAP_YAML = `apiVersion: v1
kind: ConfigMap
metadata:
  name: demo-runconfig
  labels:
    toolhive.stacklok.io/component: run-config
    toolhive.stacklok.io/mcp-server: demo
    toolhive.stacklok.io/managed-by: toolhive-operator
data:
  runconfig.json: |-
    {
      "name": "demo"
    }
`

t.test('check admits files and reports what changed (exit 0)', async (t) => {
  const dir = t.testdir({
    'app.yaml': `${CONFIGMAP_YAML}---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\n`,
  })
  const result = await runCli(['check', dir])
  t.equal(result.code, 0)
  t.match(
    result.stdout,
    /admitted ConfigMap default\/demo-runconfig: mutated \(1 patch operation\)\n {4}add \/metadata\/annotations/,
  )
  t.match(
    result.stdout,
    /unchecked Service default\/web: no rule of mcp-admission and no CRD given applies to its kind/,
  )
  t.match(result.stdout, /1 admitted \(1 mutated\), 0 denied, 1 not checked\n$/)
})

t.test('--output yaml prints the admitted objects; the report goes to stderr', async (t) => {
  const dir = t.testdir({ 'cm.yaml': CONFIGMAP_YAML })
  const result = await runCli(['check', '--namespace', 'tools', '-o', 'yaml', join(dir, 'cm.yaml')])
  t.equal(result.code, 0)
  const [doc] = parseAllDocuments(result.stdout).map(
    (d) => d.toJS() as { metadata: { namespace: string; annotations: Record<string, string> } },
  )
  t.equal(doc?.metadata.namespace, 'tools')
  t.equal(doc?.metadata.annotations['toolhive.stacklok.dev/content-checksum'], VECTOR_CHECKSUM)
  t.match(result.stderr, /1 admitted/)
})

t.test('--output json prints a v1 List', async (t) => {
  const dir = t.testdir({
    'cm.json': JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'plain' }, data: { a: 'b' } },
      ],
    }),
  })
  const result = await runCli(['check', '-o', 'json', dir])
  t.equal(result.code, 0)
  t.match(JSON.parse(result.stdout), {
    apiVersion: 'v1',
    kind: 'List',
    items: [{ kind: 'ConfigMap', metadata: { name: 'plain' } }],
  })
})

t.test('a denied object makes check exit 1 and names the field', async (t) => {
  const dir = t.testdir({
    'bad.yaml':
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x-runconfig\n  labels: {toolhive.stacklok.io/component: run-config}\ndata:\n  port: 8080\n',
  })
  const result = await runCli(['check', dir])
  t.equal(result.code, 1)
  t.match(
    result.stdout,
    /DENIED {3}ConfigMap default\/x-runconfig by the mutate webhook:\n {4}data\[port\]: Invalid value: "integer": must be of type string/,
  )
  t.match(result.stdout, /0 admitted \(0 mutated\), 1 denied/)
})

t.test('bad files exit 2 with the file and document named', async (t) => {
  const dir = t.testdir({
    'broken.yaml': 'kind: ConfigMap\nmetadata: {name: a}\n---\nfoo: [\n',
    'scalar.yaml': '42\n',
    'nokind.yaml': 'metadata: {}\n',
  })
  t.match(await runCli(['check', join(dir, 'broken.yaml')]), {
    code: 2,
    stderr: /broken\.yaml, document 2: /,
  })
  t.match(await runCli(['check', join(dir, 'scalar.yaml')]), {
    code: 2,
    stderr: /scalar\.yaml, document 1: expected an object, got number/,
  })
  t.match(await runCli(['check', join(dir, 'nokind.yaml')]), {
    code: 2,
    stderr: /object has no kind/,
  })
  t.match(await runCli(['check']), { code: 2, stderr: /missing required argument/ })
})

const SAMPLES = new URL('../../samples/', import.meta.url).pathname

t.test('the shipped samples: the proxy Deployment is mutated, nothing is denied', async (t) => {
  const result = await runCli(['check', '-o', 'json', join(SAMPLES, 'objects')])
  t.equal(result.code, 0, result.stderr)
  const items = (JSON.parse(result.stdout) as { items: any[] }).items
  const deployment = items.find((item) => item.kind === 'Deployment')
  const configMap = items.find((item) => item.kind === 'ConfigMap')
  const annotations = deployment.spec.template.metadata.annotations
  t.equal(
    annotations['toolhive.stacklok.dev/runconfig-checksum'],
    configMap.metadata.annotations['toolhive.stacklok.dev/content-checksum'],
  )
  t.equal(annotations['toolhive.stacklok.dev/mcpserver-generation'], '3')
  t.equal(annotations['vault.hashicorp.com/agent-inject'], 'true', 'other keys pass through')
  t.equal(deployment.spec.replicas, 1, 'stdio is capped at one replica')
  t.equal(deployment.metadata.annotations, undefined, 'no Deployment annotation is added')
  t.match(result.stderr, /admitted Deployment default\/demo: mutated/)
  t.match(
    result.stderr,
    /warning: spec\.replicas: stdio MCPServer demo supports 1 replica; set to 1 \(was 2\)/,
  )
})

t.test('the invalid sample is denied with every violation listed (exit 1)', async (t) => {
  const result = await runCli(['check', join(SAMPLES, 'invalid')])
  t.equal(result.code, 1)
  for (const text of [
    'spec.validating[0].url: Invalid value: "not-a-valid-url"',
    'spec.validating[0].timeout: Invalid value: "1m"',
    'spec.validating[0].failurePolicy: Unsupported value: "Fail"',
    'spec.validating[1].name: Duplicate value: "policy_check"',
    'spec.validating[1].url: Invalid value: "http://audit.example.com/hook"',
    'spec.validating[1].tlsConfig.clientKeySecretRef: Required value',
  ]) {
    t.ok(result.stdout.includes(text), text)
  }
})

t.test(
  'check prints no user text raw: a name cannot forge a line or drive the terminal',
  async (t) => {
    const names: [string, string][] = [
      ['a\n0 admitted (0 mutated), 0 denied', '"a\\n0 admitted (0 mutated), 0 denied"'],
      ['\u001b[2Jcleared', '"\\x1b[2Jcleared"'],
      ['c1\u009bcsi', '"c1\\u009bcsi"'],
      ['rtl\u202eevil', '"rtl\\u202eevil"'],
      ['plain', 'plain'],
    ]
    for (const [name, shown] of names) {
      const dir = t.testdir({
        'cm.json': JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } }),
      })
      const result = await runCli(['check', join(dir, 'cm.json')])
      t.equal(result.code, 0, JSON.stringify(name))
      t.equal(
        result.stdout,
        `admitted ConfigMap default/${shown}: unchanged\n1 admitted (0 mutated), 0 denied\n`,
        JSON.stringify(name),
      )
    }
  },
)

t.test('inputs check cannot read exactly: exit 2 and one line, JSON as YAML', async (t) => {
  const files: Record<string, string> = {
    'dup.json': '{"apiVersion":"v1","kind":"Service","metadata":{"name":"a","name":"b"}}',
    'dup.yaml': '{"apiVersion":"v1","kind":"Service","metadata":{"name":"a","name":"b"}}',
    'inf.yaml':
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {replicas: .inf}\n',
    'inf.json':
      '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"a"},"spec":{"replicas":1e400}}',
    'unnamed.yaml': 'apiVersion: v1\nkind: Service\nmetadata: {labels: {a: b}}\n',
    'meta.yaml': 'apiVersion: v1\nkind: Service\nmetadata: [x]\n',
    'nested.yaml':
      'apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items:\n  - {apiVersion: v1, kind: Service}\n',
    'deep.yaml': `kind: Service\nspec: ${'['.repeat(50_000)}\n`,
  }
  const dir = t.testdir(files)
  for (const name of Object.keys(files)) {
    const result = await runCli(['check', join(dir, name)])
    t.equal(result.code, 2, `${name}: exit 2`)
    t.equal(result.stdout, '', `${name}: nothing checked`)
    t.match(
      result.stderr,
      new RegExp(`^mcp-admission: [^\\n]*${name}, document 1[^\\n]*\\n$`),
      name,
    )
  }
  const bom = t.testdir({
    'bom.json': '\uFEFF{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}',
  })
  t.match(await runCli(['check', join(bom, 'bom.json')]), { code: 0, stdout: /1 admitted/ })
})

t.test('check - reads standard input, bounded like a file', async (t) => {
  const piped = await runCli(['check', '-'], CONFIGMAP_YAML)
  t.equal(piped.code, 0, piped.stderr)
  t.match(piped.stdout, /^admitted ConfigMap default\/demo-runconfig: mutated/)
  const empty = await runCli(['check', '-'], '')
  t.equal(empty.code, 2)
  t.equal(empty.stderr, 'mcp-admission: standard input: no objects found\n')
  const twice = await runCli(['check', '-', '-'], CONFIGMAP_YAML)
  t.equal(twice.code, 2)
  t.equal(twice.stderr, 'mcp-admission: -: standard input can be read only once\n')
})

t.test('an object that names no API version is never reported as checked: exit 2', async (t) => {
  const files: Record<string, [string, string]> = {
    'none.yaml': ['kind: ConfigMap\nmetadata: {name: a}\n', 'ConfigMap has no apiVersion'],
    'number.yaml': [
      'apiVersion: 1\nkind: ConfigMap\nmetadata: {name: a}\n',
      'ConfigMap apiVersion must be a string, got number',
    ],
    'path.yaml': [
      'apiVersion: a/b/c\nkind: ConfigMap\nmetadata: {name: a}\n',
      'ConfigMap apiVersion must be group/version or a version such as v1, got "a/b/c"',
    ],
    // The first document is fine; the second is the one refused, by its number.
    'second.yaml': [
      `${CONFIGMAP_YAML}---\nkind: Service\nmetadata: {name: b}\n`,
      'Service has no apiVersion',
    ],
  }
  const dir = t.testdir(Object.fromEntries(Object.entries(files).map(([n, [text]]) => [n, text])))
  for (const [name, [, reason]] of Object.entries(files)) {
    const result = await runCli(['check', join(dir, name)])
    t.equal(result.code, 2, name)
    t.equal(result.stdout, '', `${name}: nothing reported`)
    const document = name === 'second.yaml' ? 2 : 1
    t.equal(result.stderr, `mcp-admission: ${join(dir, name)}, document ${document}: ${reason}\n`)
  }
})

t.test('without CRDs, check says what it did not check; --strict needs them', async (t) => {
  const dir = t.testdir({ 'cm.yaml': CONFIGMAP_YAML })
  const plain = await runCli(['check', join(dir, 'cm.yaml')])
  t.equal(plain.code, 0, 'information, not a finding')
  // One line, shaped as information: not the `mcp-admission: …` of an error, nor a warning.
  t.equal(
    plain.stderr,
    "info: spec fields were not checked against the CRDs' schemas and CEL rules (give --crds DIR or --kubeconfig FILE to check them as the API server does)\n",
  )
  t.notMatch(plain.stdout, /warning|not checked against/, 'no warning in the report')
  // With the report on stderr too, still said once, after it.
  const yaml = await runCli(['check', '-o', 'yaml', join(dir, 'cm.yaml'), join(dir, 'cm.yaml')])
  t.equal(yaml.stderr.match(/^info: /gm)?.length, 1, 'once, however many objects')
  t.match(yaml.stderr, /denied\ninfo: spec fields were not checked[^\n]*\n$/)
  const strict = await runCli(['check', '--strict', join(dir, 'cm.yaml')])
  t.equal(strict.code, 2)
  t.equal(strict.stdout, '')
  t.equal(
    strict.stderr,
    "mcp-admission: --strict: the CRDs' schemas and CEL rules were not checked: give --crds DIR or --kubeconfig FILE to check them as the API server does\n",
  )
})

t.test('the same object in two files is checked twice and said to be a repeat', async (t) => {
  const dir = t.testdir({ 'a.yaml': CONFIGMAP_YAML, 'b.yaml': CONFIGMAP_YAML })
  const result = await runCli(['check', dir])
  t.equal(result.code, 0, 'a warning, not a denial: kubectl apply takes both')
  t.match(
    result.stdout,
    `    warning: also in ${join(dir, 'a.yaml')}, document 1: kubectl create refuses the repeat (AlreadyExists); kubectl apply applies the later over the earlier\n`,
  )
  t.equal(result.stdout.match(/warning: also in/g)?.length, 1, 'only the repeat is marked')
})

t.test(
  'references are resolved among the files given; a target not among them is named',
  async (t) => {
    const dir = t.testdir({
      'group.yaml': `apiVersion: toolhive.stacklok.dev/v1beta1
kind: MCPGroup
metadata: {name: team, namespace: apps}
spec: {}
`,
      'proxy.yaml': `apiVersion: toolhive.stacklok.dev/v1beta1
kind: MCPRemoteProxy
metadata: {name: remote, namespace: apps}
spec:
  remoteUrl: https://mcp.example.com
  groupRef: {name: team}
  toolConfigRef: {name: tools}
`,
    })
    const result = await runCli(['check', dir])
    t.equal(result.code, 0, 'a warning, never a denial')
    t.match(
      result.stdout,
      /admitted MCPRemoteProxy apps\/remote: unchanged\n {4}warning: spec\.toolConfigRef\.name: MCPToolConfig "tools" not found/,
    )
    t.notMatch(result.stdout, /groupRef/, 'the group is among the files')
  },
)
