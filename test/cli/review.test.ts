import t from 'tap'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { runCli } from '../helpers/cli.ts'
import { VECTOR_CHECKSUM, patchOf, review, runConfigMap } from '../helpers/objects.ts'
import type { AdmissionReviewResponse } from '../../src/admission/review.ts'

const SAMPLE = 'samples/reviews/runconfig-configmap-create.json'

// The checksum of docs/enforcement.md#the-runconfig-checksum.
t.test('the shipped sample review is patched with the RunConfig checksum (exit 0)', async (t) => {
  const result = await runCli(['review', SAMPLE])
  t.equal(result.code, 0)
  const answer = JSON.parse(result.stdout) as AdmissionReviewResponse
  t.equal(answer.response.uid, 'b3a3f1a2-0000-4000-8000-000000000001')
  t.match(patchOf(answer.response), [
    {
      op: 'add',
      path: '/metadata/annotations',
      value: { 'toolhive.stacklok.dev/content-checksum': VECTOR_CHECKSUM },
    },
  ])
})

t.test('reads the review from stdin with -, and --webhook validate never patches', async (t) => {
  const result = await runCli(
    ['review', '--webhook', 'validate', '-'],
    JSON.stringify(review(runConfigMap())),
  )
  t.equal(result.code, 0)
  const answer = JSON.parse(result.stdout) as AdmissionReviewResponse
  t.equal(answer.response.allowed, true)
  t.equal(answer.response.patch, undefined)
})

t.test('exit 2 for bad input and usage, with a message on stderr', async (t) => {
  const dir = t.testdir({ 'broken.json': '{', 'not-review.json': '{"kind":"Pod"}' })
  const cases: [string, string[], RegExp][] = [
    [
      'missing file',
      ['review', join(dir, 'absent.json')],
      /absent\.json: no such file or directory/,
    ],
    ['invalid JSON', ['review', join(dir, 'broken.json')], /not valid JSON/],
    ['not a review', ['review', join(dir, 'not-review.json')], /invalid AdmissionReview/],
    [
      'unknown webhook',
      ['review', '--webhook', 'other', SAMPLE],
      /Allowed choices are mutate, validate/,
    ],
    ['unknown command', ['frobnicate'], /unknown command 'frobnicate'/],
    [
      'bad objects path',
      ['review', '--objects', join(dir, 'nowhere'), SAMPLE],
      /nowhere: no such file or directory/,
    ],
  ]
  for (const [name, args, message] of cases) {
    const result = await runCli(args)
    t.equal(result.code, 2, name)
    t.match(result.stderr, message, name)
    t.equal(result.stdout, '', `${name}: nothing on stdout`)
  }
})

t.test('an in-band 400 (readable uid, broken request) prints the review and exits 2', async (t) => {
  const body = review(runConfigMap())
  const dir = t.testdir({})
  const file = join(dir, 'bad-op.json')
  await writeFile(
    file,
    JSON.stringify({ ...body, request: { ...body.request, operation: 'PATCH' } }),
  )
  const result = await runCli(['review', file])
  t.equal(result.code, 2)
  t.equal((JSON.parse(result.stdout) as AdmissionReviewResponse).response.status?.code, 400)
})

t.test('a review file may start with a byte order mark', async (t) => {
  const dir = t.testdir({ 'bom.json': `\uFEFF${JSON.stringify(review(runConfigMap()))}` })
  const result = await runCli(['review', join(dir, 'bom.json')])
  t.equal(result.code, 0, result.stderr)
  t.equal(patchOf((JSON.parse(result.stdout) as AdmissionReviewResponse).response).length, 1)
})

t.test('--help and --version exit 0', async (t) => {
  t.equal((await runCli(['--version'])).code, 0)
  const help = await runCli(['review', '--help'])
  t.equal(help.code, 0)
  t.match(help.stdout, /--webhook <name>/)
})

t.test('a DELETE is judged by each rule at its default: the delete guard warns', async (t) => {
  const object = (kind: string, apiVersion: string, name: string, spec = {}) => ({
    apiVersion: `toolhive.stacklok.dev/${apiVersion}`,
    kind,
    metadata: { name, namespace: 'team' },
    spec,
  })
  const tools = object('MCPToolConfig', 'v1beta1', 'tools')
  const hooks = object('MCPWebhookConfig', 'v1alpha1', 'hooks')
  const server = object('MCPServer', 'v1beta1', 'server', {
    image: 'example.com/server:1',
    toolConfigRef: { name: 'tools' },
    webhookConfigRef: { name: 'hooks' },
  })
  const dir = t.testdir({
    'objects.yaml': [tools, hooks, server].map((one) => JSON.stringify(one)).join('\n---\n'),
    'delete-tools.json': JSON.stringify(review(tools, { operation: 'DELETE' })),
    'delete-hooks.json': JSON.stringify(review(hooks, { operation: 'DELETE' })),
  })
  const judge = (file: string) =>
    runCli(['review', '--webhook', 'validate', '--objects', join(dir, 'objects.yaml'), file])

  // MCPToolConfig's delete guard: a warning and an audit record, as the service answers by default.
  const warned = await judge(join(dir, 'delete-tools.json'))
  t.equal(warned.code, 0, warned.stderr)
  const { response } = JSON.parse(warned.stdout) as AdmissionReviewResponse
  t.equal(response.allowed, true)
  t.match(response.warnings, [/MCPToolConfig "tools" is still referenced by MCPServer server/])
  t.match(response.auditAnnotations, { validation_failure: /"rule":"delete-guard"/ })

  // A referenced MCPWebhookConfig's rule denies by default: refused, exit 1.
  const refused = await judge(join(dir, 'delete-hooks.json'))
  t.equal(refused.code, 1, refused.stderr)
  t.equal((JSON.parse(refused.stdout) as AdmissionReviewResponse).response.allowed, false)
})
