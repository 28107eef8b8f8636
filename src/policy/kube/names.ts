/** Kubernetes name and key syntax (apimachinery's IsDNS1123Subdomain) and Secret key references. */

import { violation } from '../messages/field-errors.ts'
import type { FieldViolation } from '../messages/field-errors.ts'
import { isRecord } from './object.ts'
import { checkRequiredString, isSet, wrongType } from './value-checks.ts'

const DNS1123_SUBDOMAIN_MAX = 253
const DNS1123_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?'
const DNS1123_SUBDOMAIN = new RegExp(`^${DNS1123_LABEL}(\\.${DNS1123_LABEL})*$`)
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/
const DNS1123_LABEL_MAX = 63
const DNS1123_LABEL_ONLY = new RegExp(`^${DNS1123_LABEL}$`)

/** A DNS-1123 subdomain (apimachinery's IsDNS1123Subdomain): what most kinds' names must be. */
export function isDnsSubdomain(name: string): boolean {
  return name.length <= DNS1123_SUBDOMAIN_MAX && DNS1123_SUBDOMAIN.test(name)
}

/** A DNS-1123 label (apimachinery's IsDNS1123Label): what a namespace's name must be. */
export function isDnsLabel(name: string): boolean {
  return name.length <= DNS1123_LABEL_MAX && DNS1123_LABEL_ONLY.test(name)
}

const LABEL_VALUE_MAX = 63
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/

/** A label value (apimachinery's IsValidLabelValue): empty, or at most 63 of these characters. */
export function isLabelValue(value: string): boolean {
  return value.length <= LABEL_VALUE_MAX && LABEL_VALUE.test(value)
}

// apimachinery's own wording, so users read what the API server would say about a Secret name.
const DNS1123_SUBDOMAIN_DETAIL =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', " +
  "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for " +
  `validation is '${DNS1123_LABEL}(\\.${DNS1123_LABEL})*')`
const SECRET_KEY_DETAIL =
  "a valid secret key must consist of alphanumeric characters, '-', '_' or '.' " +
  "(e.g. 'key.name', or 'KEY_NAME', or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"

/** Violations of a DNS-1123 subdomain name (all that apply, as apimachinery reports them). */
function checkDnsSubdomain(field: string, name: string): FieldViolation[] {
  const violations: FieldViolation[] = []
  if (name.length > DNS1123_SUBDOMAIN_MAX) {
    violations.push(violation.invalid(field, name, 'must be no more than 253 characters'))
  }
  if (!DNS1123_SUBDOMAIN.test(name)) {
    violations.push(violation.invalid(field, name, DNS1123_SUBDOMAIN_DETAIL))
  }
  return violations
}

/** Violations of an optional `{name, key}` Secret key reference at `field`. */
export function checkSecretKeyRef(field: string, ref: unknown): FieldViolation[] {
  if (!isSet(ref)) return []
  if (!isRecord(ref)) return [wrongType(field, ref, 'object')]
  return [
    ...checkRequiredString(`${field}.name`, ref.name, (f, name) => checkDnsSubdomain(f, name)),
    ...checkRequiredString(`${field}.key`, ref.key, (f, key) =>
      SECRET_KEY.test(key) ? [] : [violation.invalid(f, key, SECRET_KEY_DETAIL)],
    ),
  ]
}
