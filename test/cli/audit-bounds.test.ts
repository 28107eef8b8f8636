// `audit` always ends and never under-reports, against a fake API server that misbehaves: a body
// trickled a byte at a time, a 429 that passes and one that does not, a page that never comes
// under `--timeout`, discovery that is throttled, and items whose namespace or name no stored
// object could have (never in a Report). The endless and growing `continue` tokens and discovery
// that cannot be read are in audit.test.ts.

import type { IncomingMessage, ServerResponse } from 'node:http'
import { join } from 'node:path'
import t from 'tap'
import type { Test } from 'tap'
import { parseAllDocuments } from 'yaml'
import { VIEW_RESOURCES } from '../../src/cluster/resources.ts'
import { MAX_THROTTLED_RETRIES } from '../../src/cluster/throttled-reads.ts'
import { runCli } from '../helpers/cli.ts'
import { discoveryAnswer } from '../helpers/discovery-documents.ts'
import { kubeconfigText } from '../helpers/kubeconfig.ts'
import { loopbackServer } from '../helpers/loopback-server.ts'
import { NAMESPACE, workload } from '../helpers/proxy.ts'

const SERVERS = '/apis/toolhive.stacklok.dev/v1beta1/mcpservers'
const FAST = { initialMs: 1, maxMs: 2 }

type Handler = (request: IncomingMessage, response: ServerResponse) => void

interface Fake {
  readonly kubeconfig: string
  readonly server: string
  /** pathname → how it is answered; any other list is empty, discovery as a cluster serving all. */
  readonly handlers: Map<string, Handler>
  /** Each request's pathname, in order. */
  readonly requests: string[]
}

async function fakeCluster(t: Test): Promise<Fake> {
  const handlers = new Map<string, Handler>()
  const requests: string[] = []
  const port = await loopbackServer(t, (request, response) => {
    request.resume()
    const { pathname } = new URL(request.url ?? '/', 'http://fake')
    requests.push(pathname)
    const handler = handlers.get(pathname)
    if (handler) {
      handler(request, response)
      return
    }
    response.setHeader('content-type', 'application/json')
    const answer = discoveryAnswer(VIEW_RESOURCES, pathname)
    response.statusCode = answer?.status ?? 200
    response.end(JSON.stringify(answer?.body ?? { kind: 'List', metadata: {}, items: [] }))
  })
  const server = `http://127.0.0.1:${port}`
  const dir = t.testdir({
    kubeconfig: kubeconfigText(server),
  })
  return { kubeconfig: join(dir, 'kubeconfig'), server, handlers, requests }
}

/** Answers with `items` as one page. */
function page(items: unknown[]): Handler {
  return (_request, response) => {
    response.setHeader('content-type', 'application/json')
    response.end(JSON.stringify({ kind: 'List', metadata: {}, items }))
  }
}

/** Refuses with 429 the first `times` requests (for ever without), then hands over to `then`. */
function throttled(times: number, then: Handler, retryAfter?: string): Handler {
  let refused = 0
  return (request, response) => {
    if (refused++ >= times) {
      then(request, response)
      return
    }
    response.writeHead(429, {
      'content-type': 'application/json',
      ...(retryAfter === undefined ? {} : { 'retry-after': retryAfter }),
    })
    response.end(JSON.stringify({ kind: 'Status', code: 429, message: 'too many requests' }))
  }
}

t.test(
  'a page trickled a byte at a time ends at the request limit: exit 2, one line',
  async (t) => {
    const fake = await fakeCluster(t)
    let askedAt = 0
    fake.handlers.set(SERVERS, (_request, response) => {
      askedAt = Date.now()
      response.writeHead(200, { 'content-type': 'application/json' })
      const timer = setInterval(() => response.write(' '), 20)
      response.once('close', () => {
        clearInterval(timer)
      })
    })
    const result = await runCli([
      'audit',
      '--kubeconfig',
      fake.kubeconfig,
      '--request-timeout',
      '300ms',
    ])
    t.equal(result.code, 2)
    t.equal(
      result.stderr,
      `mcp-admission: cannot list mcpservers from ${fake.server}: no whole answer within 300 ms\n`,
    )
    // From the request for the page: loading the credentials and discovery come before it.
    const took = Date.now() - askedAt
    t.ok(took >= 300 && took < 1_300, `ended at the request limit (${took} ms after the request)`)
  },
)

t.test('--request-timeout reads as kubectl reads it; 0 is refused', async (t) => {
  const fake = await fakeCluster(t)
  const seconds = await runCli(['audit', '--kubeconfig', fake.kubeconfig, '--request-timeout', '5'])
  t.equal(seconds.code, 0, 'a whole number of seconds')
  for (const [given, problem] of [
    ['0', 'must be at least 1 ms, got "0"'],
    ['-1s', 'must not be negative, got "-1s"'],
    ['soon', 'must be a duration such as 500ms, 5s or 1m30s, got "soon"'],
  ] as const) {
    const refused = await runCli([
      'audit',
      '--kubeconfig',
      fake.kubeconfig,
      '--request-timeout',
      given,
    ])
    t.equal(refused.code, 2, given)
    t.equal(
      refused.stderr,
      `mcp-admission: option '--request-timeout <duration>' argument '${given}' is invalid. ${problem}\n`,
    )
  }
})

t.test('a 429 on a page is waited out: the audit completes, exit as normal', async (t) => {
  const fake = await fakeCluster(t)
  fake.handlers.set(SERVERS, throttled(1, page([workload('MCPServer', 'a')]), '1'))
  const started = Date.now()
  const result = await runCli(['audit', '--kubeconfig', fake.kubeconfig])
  t.equal(result.code, 0)
  t.equal(
    result.stderr,
    `mcp-admission: ${fake.server} is throttling reads (429): reading the list of mcpservers again in 1 s\n`,
    'a wait a person notices is said',
  )
  t.match(result.stdout, /\nMCPServer +1 +0 +0 +0 +0 +1\n/)
  t.ok(Date.now() - started >= 1_000, 'the Retry-After second was waited')
  t.equal(fake.requests.filter((path) => path === SERVERS).length, 2)
})

t.test('a 429 on discovery is waited out too', async (t) => {
  const fake = await fakeCluster(t)
  const group = '/apis/toolhive.stacklok.dev'
  const answer = discoveryAnswer(VIEW_RESOURCES, group)
  fake.handlers.set(
    group,
    throttled(2, (_request, response) => {
      response.setHeader('content-type', 'application/json')
      response.end(JSON.stringify(answer?.body))
    }),
  )
  const result = await runCli(['audit', '--kubeconfig', fake.kubeconfig], '', {
    throttleBackoff: FAST,
  })
  t.equal(result.code, 0)
  t.equal(result.stderr, '', 'waits too short to notice are not said')
  t.equal(fake.requests.filter((path) => path === group).length, 3)
})

t.test('a 429 for ever is given up after the retries: exit 2, one line', async (t) => {
  const fake = await fakeCluster(t)
  fake.handlers.set(SERVERS, throttled(Infinity, page([])))
  const result = await runCli(['audit', '--kubeconfig', fake.kubeconfig], '', {
    throttleBackoff: FAST,
  })
  t.equal(result.code, 2)
  t.equal(
    result.stderr,
    `mcp-admission: cannot list mcpservers from ${fake.server}: 429 too many requests (still throttled after ${MAX_THROTTLED_RETRIES} retries)\n`,
  )
  t.equal(fake.requests.filter((path) => path === SERVERS).length, MAX_THROTTLED_RETRIES + 1)
})

t.test('--timeout ends the audit: exit 2, one line saying what it was reading', async (t) => {
  const fake = await fakeCluster(t)
  // A page that never comes, well within the request limit of a minute.
  fake.handlers.set(SERVERS, () => undefined)
  const started = Date.now()
  const stalled = await runCli(['audit', '--kubeconfig', fake.kubeconfig, '--timeout', '500ms'])
  t.equal(stalled.code, 2)
  t.equal(
    stalled.stderr,
    `mcp-admission: audit ran out of time: --timeout 500ms passed while reading the list of mcpservers from ${fake.server}\n`,
  )
  t.ok(Date.now() - started < 5_000, 'at the deadline')

  // A wait for a 429 is within it too: a minute asked for, the deadline in half a second.
  fake.handlers.set(SERVERS, page([]))
  fake.handlers.set('/apis/toolhive.stacklok.dev', throttled(Infinity, page([]), '60'))
  const waiting = await runCli(['audit', '--kubeconfig', fake.kubeconfig, '--timeout', '1'])
  t.equal(waiting.code, 2)
  t.equal(
    waiting.stderr,
    `mcp-admission: ${fake.server} is throttling reads (429): reading API discovery again in 60 s\n` +
      `mcp-admission: audit ran out of time: --timeout 1 passed while reading API discovery from ${fake.server}\n`,
  )
  t.ok(Date.now() - started < 10_000, 'not the minute asked for')
})

t.test('an audit that ends within --timeout is not cut short', async (t) => {
  const fake = await fakeCluster(t)
  fake.handlers.set(SERVERS, page([workload('MCPServer', 'a')]))
  const result = await runCli(['audit', '--kubeconfig', fake.kubeconfig, '--timeout', '1m'])
  t.equal(result.code, 0)
  t.equal(result.stderr, '')
})

t.test(
  'a resource name from discovery that cannot be a path segment: exit 2, one line',
  async (t) => {
    const fake = await fakeCluster(t)
    const version = '/apis/toolhive.stacklok.dev/v1beta1'
    fake.handlers.set(version, (_request, response) => {
      response.setHeader('content-type', 'application/json')
      const resources = [{ name: '..', kind: 'MCPServer', namespaced: true }]
      response.end(JSON.stringify({ kind: 'APIResourceList', resources }))
    })
    const result = await runCli(['audit', '--kubeconfig', fake.kubeconfig])
    t.equal(result.code, 2)
    t.equal(
      result.stderr,
      `mcp-admission: cannot list .. from ${fake.server}: ".." cannot be a segment of a request path\n`,
    )
    const group = fake.requests.filter((path) => path === '/apis/toolhive.stacklok.dev')
    t.equal(group.length, 1, 'the group is not read again for a list at `v1beta1/..`')
  },
)

t.test('an object no API server could have stored is an error, and in no Report', async (t) => {
  const fake = await fakeCluster(t)
  const good = workload('MCPServer', 'good')
  const named = (namespace: string, name: string) => ({
    ...good,
    metadata: { ...good.metadata, namespace, name },
  })
  fake.handlers.set(
    SERVERS,
    page([good, named('Team_A', 'x'), named(NAMESPACE, 'a/b'), named('../kube-system', 'y')]),
  )
  const table = await runCli(['audit', '--kubeconfig', fake.kubeconfig])
  t.equal(table.code, 1)
  t.match(table.stdout, /\nMCPServer +4 +0 +0 +0 +3 +1\n/, 'three errors, one clean')
  t.match(
    table.stdout,
    /^ERROR {2}MCPServer Team_A\/x\n {4}could not be audited: item 1 of the list: metadata\.namespace is not a namespace name \(a DNS-1123 label\)\n/,
  )
  t.match(table.stdout, /item 2 of the list: metadata\.name is not a DNS-1123 subdomain\n/)

  const reports = await runCli(['audit', '--kubeconfig', fake.kubeconfig, '-o', 'openreports'])
  t.equal(reports.code, 1)
  const documents = parseAllDocuments(reports.stdout).map(
    (d) =>
      d.toJS() as {
        metadata: { namespace: string }
        summary: object
        results: { result: string; resources: { name: string }[] }[]
      },
  )
  t.same(
    documents.map((report) => [
      report.metadata.namespace,
      report.summary,
      report.results.map((result) => [result.result, result.resources[0]?.name]),
    ]),
    [[NAMESPACE, { pass: 1, fail: 0, warn: 0, error: 0, skip: 0 }, [['pass', 'good']]]],
    'only the valid namespace has a Report, with only the object it can name',
  )
  t.same(reports.stderr.split('\n'), [
    'mcp-admission: not in any Report: MCPServer (namespace "Team_A" is not a namespace name): could not be audited: item 1 of the list: metadata.namespace is not a namespace name (a DNS-1123 label)',
    'mcp-admission: not in any Report: MCPServer (name "a/b" is not a valid name): could not be audited: item 2 of the list: metadata.name is not a DNS-1123 subdomain',
    'mcp-admission: not in any Report: MCPServer (namespace "../kube-system" is not a namespace name): could not be audited: item 3 of the list: metadata.namespace is not a namespace name (a DNS-1123 label)',
    '',
  ])
})
