/**
 * What the text of a `serve` setting may be, and what it becomes: a port, an address, a duration
 * within bounds, one of a few words. The settings table (serve-settings.ts) gives each setting one
 * of these kinds, so a flag and its variable are read alike, and a problem is worded once, as the
 * words after the name of what set it (`MCP_ADMISSION_PORT: must be a port number …`).
 */

import { isIP } from 'node:net'
import { parseRuleActions, parseValidationActions } from '../policy/action-settings.ts'
import type { RuleActions } from '../policy/rule-actions.ts'
import { RULE_TABLE } from '../policy/rules.ts'
import type { ValidationAction } from '../policy/rules.ts'
import { parseDuration, parseGoDuration } from '../policy/go/duration.ts'
import { parseBoolean } from './environment.ts'

/**
 * A value read from its text. A refused text still gives a value (a port of 0, a duration of 0,
 * the text itself): the settings after it are read and checked too, and the problem makes
 * resolveServeConfig answer with every problem instead of a config.
 */
export interface Read<T> {
  readonly value: T
  /** What is wrong with the text: one line per problem (the text is quoted, so it has none). */
  readonly problem?: string
}

export interface ValueKind<T> {
  readonly read: (text: string) => Read<T>
  /** The kind's bounds for the help text (`at least 90s`), when it has any worth saying. */
  readonly hint?: string
}

/** The longest delay a Node timer holds (2^31−1 ms): a longer one fires after 1 ms. */
export const LONGEST_TIMER = '596h31m23.647s'

const quoted = (text: string): string => JSON.stringify(text)

/** Any text: what it means is the resolver's to say (a kubeconfig file, or KUBECONFIG's list). */
export const anyText: ValueKind<string> = { read: (text) => ({ value: text }) }

/** Any text but the empty one, which is no file or directory. */
export function nonEmpty(problem: string): ValueKind<string> {
  return { read: (text) => (text === '' ? { value: text, problem } : { value: text }) }
}

export const ipAddress: ValueKind<string> = {
  read: (text) =>
    isIP(text) === 0 && text !== 'localhost'
      ? {
          value: text,
          problem: `must be an IP address to listen on (or localhost), got ${quoted(text)}`,
        }
      : { value: text },
}

export const portNumber: ValueKind<number> = {
  read: (text) => {
    const value = Number(text)
    return !/^\d+$/.test(text) || value > 65535
      ? { value: 0, problem: `must be a port number from 0 to 65535, got ${quoted(text)}` }
      : { value }
  },
}

/**
 * A Go duration in milliseconds, from `min` (0 unless given) to `max`, both in Go syntax. A
 * duration feeds a timer, so `max` is at most LONGEST_TIMER: Node clamps a longer delay to 1 ms,
 * which would turn a long shutdown delay into none and a long poll interval into a busy loop.
 */
export function duration(bounds: {
  readonly min?: string
  readonly max: string
}): ValueKind<number> {
  const read = durationReader(bounds)
  return {
    read: (text) => read(text, text),
    ...(bounds.min === undefined ? {} : { hint: `at least ${bounds.min}` }),
  }
}

/**
 * A timeout as kubectl's `--request-timeout` reads one (client-go's clientcmd.ParseTimeout): a
 * whole number of seconds (`60`), else a Go duration (`1m30s`), then held to `bounds` as
 * `duration` holds one.
 */
export function timeoutValue(bounds: {
  readonly min?: string
  readonly max: string
}): ValueKind<number> {
  const read = durationReader(bounds)
  return { read: (text) => read(/^\d+$/.test(text) ? `${text}s` : text, text) }
}

/** Reads `text` as a Go duration within `bounds`; a problem quotes `shown`, the text as given. */
function durationReader(bounds: {
  readonly min?: string
  readonly max: string
}): (text: string, shown: string) => Read<number> {
  const minMs = boundMs(bounds.min ?? '0s')
  const maxMs = boundMs(bounds.max)
  return (text, shown) => {
    const parsed = parseGoDuration(text)
    if (!parsed.ok) {
      return {
        value: 0,
        problem: `must be a duration such as 500ms, 5s or 1m30s, got ${quoted(shown)}`,
      }
    }
    if (parsed.nanoseconds < 0n) {
      return { value: 0, problem: `must not be negative, got ${quoted(shown)}` }
    }
    const value = Number(parsed.nanoseconds) / 1e6
    if (value < minMs) {
      return { value, problem: `must be at least ${minMs} ms, got ${quoted(shown)}` }
    }
    if (value > maxMs) {
      return {
        value,
        problem: `must be at most ${bounds.max} (${maxMs} ms), got ${quoted(shown)}`,
      }
    }
    return { value }
  }
}

/** A bound written in the table: a mistake there is the program's, found at its first start. */
function boundMs(text: string): number {
  const ms = parseDuration(text)
  if (ms === undefined || ms > 2 ** 31 - 1) throw new Error(`not a timer's duration: ${text}`)
  return ms
}

/** One of `words`, exactly (case included). */
export function oneOf<const W extends string>(words: readonly [W, ...W[]]): ValueKind<W> {
  return {
    read: (text) => {
      const word = words.find((known) => known === text)
      return word === undefined
        ? {
            value: words[0],
            problem: `must be one of ${words.join(', ')}, got ${quoted(text)}`,
          }
        : { value: word }
    },
  }
}

/**
 * What a violation becomes: a comma-separated list of actions, by the API server's rules for a
 * ValidatingAdmissionPolicyBinding (policy/action-settings.ts).
 */
export const validationActions: ValueKind<readonly ValidationAction[]> = {
  read: (text) => {
    const parsed = parseValidationActions(text)
    return 'problem' in parsed
      ? { value: ['Deny'], problem: parsed.problem }
      : { value: parsed.actions }
  },
}

/**
 * What the violations of named rules become: `rule=actions` items separated by `;`, each list
 * read as `validationActions` reads one and allowed by the rule table (policy/action-settings.ts).
 * The help names the rules, from the table.
 */
export const ruleActions: ValueKind<RuleActions> = {
  read: (text) => {
    const parsed = parseRuleActions(text)
    return 'problems' in parsed
      ? { value: new Map(), problem: parsed.problems.join('\n') }
      : { value: parsed.ruleActions }
  },
  hint: `rules: ${RULE_TABLE.map((rule) => rule.name).join(', ')}`,
}

/**
 * A switch: given on the command line, it is on; its variable is read as Go's strconv.ParseBool
 * reads a boolean (environment.ts), so `false` is off and `yes` an error, not on.
 */
export const switchValue: ValueKind<boolean> = {
  read: (text) => {
    const value = parseBoolean(text)
    return value === undefined
      ? {
          value: false,
          problem: `must be true or false (also 1, 0, t, f, TRUE, FALSE, True, False), got ${quoted(text)}`,
        }
      : { value }
  },
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

export const namespaceName: ValueKind<string> = {
  read: (text) =>
    DNS1123_LABEL.test(text) && text.length <= 63
      ? { value: text }
      : {
          value: text,
          problem: `must be a namespace name (a DNS-1123 label), got ${quoted(text)}`,
        },
}

/** `name` or `namespace/name`: a namespace is a DNS-1123 label, a service account a subdomain. */
export const serviceAccountReference: ValueKind<string> = {
  read: (text) =>
    isServiceAccountReference(text)
      ? { value: text }
      : {
          value: text,
          problem: `must be a service account name or namespace/name, got ${quoted(text)}`,
        },
}

function isServiceAccountReference(value: string): boolean {
  const parts = value.split('/')
  if (parts.length > 2) return false
  const name = parts.at(-1) ?? ''
  const namespace = parts.length === 2 ? parts[0] : undefined
  return (
    name.length <= 253 &&
    DNS1123_SUBDOMAIN.test(name) &&
    (namespace === undefined || (namespace.length <= 63 && DNS1123_LABEL.test(namespace)))
  )
}
