/**
 * Properties of the HTTP layer (Fastify `inject`, the real app and admission pipeline): whatever
 * the body, the reply is a well-formed HTTP 200 AdmissionReview — uid echoed whenever the body
 * carried a readable one, apiVersion echoed, `allowed` a boolean, a patch only with its type, on
 * /mutate, as base64 of a JSON Patch that parses — or a 4xx with a JSON `message`; never a 5xx,
 * an in-band 500 (a policy that threw), an exception or a hang.
 */

import { Writable } from 'node:stream'
import fc from 'fast-check'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { pino } from 'pino'
import { ADMISSION_API_VERSIONS } from '../../src/admission/review.ts'
import type { WebhookName } from '../../src/admission/review.ts'
import { createAdmission } from '../../src/admission/webhook.ts'
import { MemoryView } from '../../src/cluster/memory-view.ts'
import { buildAdmissionApp } from '../../src/http/app.ts'
import { createMetrics } from '../../src/metrics/metrics.ts'
import { MESSAGE_LIMITS } from '../../src/policy/messages/render.ts'
import type { FuzzProperty } from './property.ts'
import {
  API_SERVER_CONTENT_TYPES,
  LIMIT,
  VIEW_OBJECTS,
  arbitraryBody,
  buildBody,
  recipe,
} from './reviews.ts'
import type { Body } from './reviews.ts'
import { preview, toWireText } from './wire.ts'

/** Longest any single request may take before it counts as a hang. */
export const REPLY_TIMEOUT_MS = 10_000
const CONVERGENCE_MAX_BYTES = 1024 * 1024

/**
 * Formerly a bug: an object nested thousands of levels deep made a recursive step overflow the
 * stack (an in-band 500). Requests a rule reads are now held to one nesting limit
 * (policy/kube/nesting.ts); a regression shows as this message.
 */
export const STACK_OVERFLOW = /Maximum call stack size exceeded/

class Broken extends Error {
  override name = 'PropertyBroken'
}

function check(condition: boolean, message: () => string): asserts condition {
  if (!condition) throw new Broken(message())
}

let shared: FastifyInstance | undefined

/** The fuzzed app: the product's admission over a view of VIEW_OBJECTS, logging at debug. */
export function fuzzApp(): FastifyInstance {
  if (shared) return shared
  const sink = new Writable({
    write(_chunk, _encoding, callback) {
      callback()
    },
  })
  shared = buildAdmissionApp({
    admission: createAdmission({ view: new MemoryView(structuredClone(VIEW_OBJECTS)) }),
    logger: pino({ level: 'debug' }, sink),
    metrics: createMetrics(),
  })
  return shared
}

export async function closeFuzzApp(): Promise<void> {
  const app = shared
  shared = undefined
  await app?.close()
}

/** POSTs a body, failing if no reply comes within REPLY_TIMEOUT_MS. */
export async function post(body: Body): Promise<LightMyRequestResponse> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      reject(new Broken(`no reply within ${REPLY_TIMEOUT_MS} ms`))
    }, REPLY_TIMEOUT_MS)
  })
  try {
    return await Promise.race([
      fuzzApp().inject({
        method: 'POST',
        url: `/${body.webhook}`,
        headers: body.contentType === undefined ? {} : { 'content-type': body.contentType },
        payload: body.payload,
      }),
      timeout,
    ])
  } finally {
    clearTimeout(timer)
  }
}

/** What a body lets the server read, by the spec: a JSON object with `request.uid` a string. */
export function readable(payload: Buffer): { uid?: string; apiVersion?: unknown } {
  let body: unknown
  try {
    body = JSON.parse(payload.toString('utf8'))
  } catch {
    return {}
  }
  if (!isObject(body)) return {}
  const request = body['request']
  const uid = isObject(request) ? request['uid'] : undefined
  return {
    ...(typeof uid === 'string' && uid !== '' ? { uid } : {}),
    apiVersion: body['apiVersion'],
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

const PATCH_OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test'])

/**
 * Checks one reply against the spec. Returns 'known-bug' when it is the tolerated deep-nesting
 * 500, else nothing; throws a readable reason when the reply is wrong.
 */
export function checkReply(body: Body, reply: LightMyRequestResponse): 'known-bug' | undefined {
  const { statusCode } = reply
  const facts = readable(body.payload)
  const describe = () =>
    `HTTP ${statusCode} ${preview(reply.body, 600)} (content type ${String(body.contentType)}, ` +
    `${body.payload.length} bytes)`
  check(statusCode === 200 || (statusCode >= 400 && statusCode < 500), describe)
  let answer: unknown
  try {
    answer = JSON.parse(reply.body)
  } catch {
    check(false, () => `reply is not JSON: ${describe()}`)
  }
  check(isObject(answer), () => `reply is not a JSON object: ${describe()}`)

  if (statusCode !== 200) {
    const message = answer['message']
    check(typeof message === 'string' && message !== '', () => `4xx without message: ${describe()}`)
    const mustAnswer =
      facts.uid !== undefined &&
      body.payload.length <= LIMIT &&
      API_SERVER_CONTENT_TYPES.includes(body.contentType)
    check(!mustAnswer, () => `a body with readable uid ${preview(facts.uid, 80)} got ${describe()}`)
    return undefined
  }

  check(
    (ADMISSION_API_VERSIONS as readonly unknown[]).includes(answer['apiVersion']),
    () => `bad apiVersion: ${describe()}`,
  )
  if ((ADMISSION_API_VERSIONS as readonly unknown[]).includes(facts.apiVersion)) {
    check(answer['apiVersion'] === facts.apiVersion, () => `apiVersion not echoed: ${describe()}`)
  }
  check(answer['kind'] === 'AdmissionReview', () => `bad kind: ${describe()}`)
  const response = answer['response']
  check(isObject(response), () => `no response: ${describe()}`)
  check(facts.uid !== undefined, () => `200 for a body without a readable uid: ${describe()}`)
  check(response['uid'] === facts.uid, () => `uid not echoed: ${describe()}`)
  check(typeof response['allowed'] === 'boolean', () => `allowed not boolean: ${describe()}`)
  checkPatch(body.webhook, response, describe)
  const warnings = response['warnings']
  check(
    warnings === undefined ||
      (Array.isArray(warnings) &&
        warnings.every((w) => typeof w === 'string' && w.length <= MESSAGE_LIMITS.warningChars)),
    () => `bad warnings: ${describe()}`,
  )
  const status = response['status']
  if (!response['allowed']) {
    check(
      isObject(status) &&
        typeof status['code'] === 'number' &&
        status['code'] >= 400 &&
        status['code'] < 600 &&
        typeof status['message'] === 'string',
      () => `a denial without a status: ${describe()}`,
    )
  }
  if (isObject(status) && typeof status['code'] === 'number' && status['code'] >= 500) {
    check(false, () => `in-band ${String(status['code'])} (a policy threw): ${describe()}`)
  }
  return undefined
}

function checkPatch(
  webhook: WebhookName,
  response: Record<string, unknown>,
  describe: () => string,
): void {
  const { patch, patchType } = response
  check((patch === undefined) === (patchType === undefined), () => `patch/patchType: ${describe()}`)
  if (patch === undefined) return
  check(webhook === 'mutate', () => `/validate returned a patch: ${describe()}`)
  check(patchType === 'JSONPatch', () => `patchType ${String(patchType)}: ${describe()}`)
  check(
    typeof patch === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(patch),
    () => `patch not base64: ${describe()}`,
  )
  let operations: unknown
  try {
    operations = JSON.parse(Buffer.from(patch, 'base64').toString('utf8'))
  } catch {
    check(false, () => `patch is not JSON: ${describe()}`)
  }
  check(
    Array.isArray(operations) &&
      operations.length > 0 &&
      operations.every(
        (op: unknown) =>
          isObject(op) &&
          typeof op['op'] === 'string' &&
          PATCH_OPS.has(op['op']) &&
          typeof op['path'] === 'string' &&
          (op['path'] === '' || op['path'].startsWith('/')),
      ),
    () => `patch is not a JSON Patch: ${describe()}`,
  )
}

/** The JSON Patch in a 200 reply, decoded (empty when there is none). */
function patchIn(reply: LightMyRequestResponse): PatchOperation[] {
  const patch = (JSON.parse(reply.body) as { response?: { patch?: string } }).response?.patch
  return patch === undefined
    ? []
    : (JSON.parse(Buffer.from(patch, 'base64').toString('utf8')) as PatchOperation[])
}

interface PatchOperation {
  readonly op: string
  readonly path: string
  readonly value?: unknown
}

/**
 * Applies add/remove/replace operations (all the webhook emits) as the API server would: keys
 * are unescaped per RFC 6901 and set as own properties, so `__proto__` is a key like any other.
 * Written here rather than borrowed from src/ so the patch is checked independently. Changes
 * `document` in place (it is a fresh parse) and returns the result.
 */
export function applyJsonPatch(document: unknown, patch: readonly PatchOperation[]): unknown {
  const root = { value: document }
  for (const { op, path, value } of patch) {
    const tokens = path
      .split('/')
      .slice(1)
      .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'))
    const last = tokens.pop()
    let parent: unknown = root
    for (const token of ['value', ...tokens]) {
      check(
        typeof parent === 'object' && parent !== null && Object.hasOwn(parent, token),
        () => `patch path ${path} does not exist`,
      )
      parent = (parent as Record<string, unknown>)[token]
    }
    if (last === undefined) {
      check(op !== 'remove', () => 'patch removes the whole object')
      root.value = structuredClone(value)
      continue
    }
    check(typeof parent === 'object' && parent !== null, () => `patch parent of ${path} missing`)
    if (Array.isArray(parent)) {
      const index = last === '-' ? parent.length : Number(last)
      check(Number.isInteger(index) && index >= 0 && index <= parent.length, () => `bad ${path}`)
      if (op === 'remove') parent.splice(index, 1)
      else if (op === 'add') parent.splice(index, 0, structuredClone(value))
      else parent[index] = structuredClone(value)
    } else if (op === 'remove') {
      check(Object.hasOwn(parent, last), () => `patch removes missing ${path}`)
      Reflect.deleteProperty(parent, last)
    } else {
      check(op === 'add' || Object.hasOwn(parent, last), () => `patch replaces missing ${path}`)
      Object.defineProperty(parent, last, {
        value: structuredClone(value),
        writable: true,
        enumerable: true,
        configurable: true,
      })
    }
  }
  return root.value
}

/**
 * docs/enforcement.md#never-a-fight-with-the-operator: admitting the webhook's own output again
 * yields no patch. The patched object is sent back in the same envelope, written so that JSON.parse
 * gives the same values (-0, 1e400).
 */
async function checkConvergence(body: Body, reply: LightMyRequestResponse): Promise<void> {
  const patch = patchIn(reply)
  // Re-encoding a body of several MiB takes longer than it teaches: convergence is checked on
  // the smaller ones (nearly all).
  if (patch.length === 0 || body.payload.length > CONVERGENCE_MAX_BYTES) return
  const sent = JSON.parse(body.payload.toString('utf8')) as { request: Record<string, unknown> }
  let payload: Buffer
  try {
    const patched = applyJsonPatch(sent.request['object'], patch)
    Object.defineProperty(sent.request, 'object', { value: patched, enumerable: true })
    payload = Buffer.from(toWireText(sent))
  } catch (error) {
    // Nesting too deep for JSON.stringify or structuredClone here: the harness cannot redo it.
    if (error instanceof RangeError) return
    throw error
  }
  const again: Body = { webhook: body.webhook, payload, contentType: 'application/json' }
  const second = await post(again)
  checkReply(again, second)
  const more = patchIn(second)
  check(
    more.length === 0,
    () =>
      `admitting the patched object again patches it again: ${preview(more, 600)} ` +
      `(first patch ${preview(patch, 600)})`,
  )
}

export const HTTP_PROPERTIES: readonly FuzzProperty[] = [
  {
    name: 'HTTP: valid reviews, mutated (and patched output admitted again unchanged)',
    runs: 300,
    property: () =>
      fc.asyncProperty(recipe, async (r) => {
        const body = buildBody(r)
        const reply = await post(body)
        if (checkReply(body, reply) === undefined && reply.statusCode === 200) {
          await checkConvergence(body, reply)
        }
      }),
  },
  {
    name: 'HTTP: arbitrary bodies',
    runs: 300,
    property: () =>
      fc.asyncProperty(arbitraryBody, async (b) => {
        const body: Body = {
          webhook: b.webhook,
          payload: Buffer.from(b.body),
          contentType: b.contentType,
        }
        checkReply(body, await post(body))
      }),
  },
]

/** Records every unhandled rejection and uncaught exception while fuzzing. */
export function watchProcess(): { readonly events: string[]; stop(): void } {
  const events: string[] = []
  const onRejection = (reason: unknown) => events.push(`unhandledRejection: ${String(reason)}`)
  const onException = (error: unknown) => events.push(`uncaughtException: ${String(error)}`)
  process.on('unhandledRejection', onRejection)
  process.on('uncaughtException', onException)
  return {
    events,
    stop() {
      process.off('unhandledRejection', onRejection)
      process.off('uncaughtException', onException)
    },
  }
}
