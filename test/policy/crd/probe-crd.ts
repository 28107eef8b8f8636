/**
 * A small CRD with one of each schema feature and rule form the evaluation supports, and the
 * words kube-apiserver v1.37.2 answered for each (read from the API server, not inferred).
 */

import type { KubeObject } from '../../../src/policy/kube/object.ts'

const rules = [
  { rule: "!has(self.a) || self.a != 'fp'", message: 'a must not be fp', fieldPath: '.a' },
  { rule: "!has(self.a) || self.a != 'me'", messageExpression: "'a is ' + self.a" },
  {
    rule: "!has(self.a) || self.a != 'rs'",
    message: 'reason forbidden',
    reason: 'FieldValueForbidden',
  },
  {
    rule: "!has(self.a) || self.a != 'rq'",
    message: 'reason required',
    reason: 'FieldValueRequired',
  },
  { rule: "!has(self.a) || self.a != 'dup'", message: 'reason dup', reason: 'FieldValueDuplicate' },
  { rule: "!has(self.a) || self.a != 'fpm'", message: 'fp map', fieldPath: ".m['x.y']" },
  {
    rule: "!has(self.a) || self.a != 'mee'",
    messageExpression: 'self.list[5]',
    message: 'fallback msg',
  },
  { rule: "!has(self.a) || self.a != 'mee2'", messageExpression: 'self.list[5]' },
  { rule: "!has(self.a) || self.a != 'err' || self.list[5] == 'x'", message: 'runtime error' },
]

export const PROBE_CRD: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'probes.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { kind: 'Probe', plural: 'probes' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              status: { type: 'object', properties: { phase: { type: 'integer' } } },
              spec: {
                type: 'object',
                required: ['req'],
                'x-kubernetes-validations': rules,
                properties: {
                  req: { type: 'string' },
                  a: { type: 'string' },
                  b: {
                    type: 'boolean',
                    'x-kubernetes-validations': [{ rule: 'self', message: 'b must be true' }],
                  },
                  list: {
                    type: 'array',
                    items: { type: 'string' },
                    'x-kubernetes-validations': [{ rule: 'size(self) < 3', message: 'short list' }],
                  },
                  m: {
                    type: 'object',
                    additionalProperties: { type: 'string' },
                    'x-kubernetes-validations': [{ rule: 'size(self) < 2', message: 'small map' }],
                  },
                  imm: {
                    type: 'string',
                    'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'immutable' }],
                  },
                  timeout: {
                    type: 'string',
                    format: 'duration',
                    'x-kubernetes-validations': [
                      {
                        rule: "duration(self) >= duration('0s')",
                        message: 'timeout must be non-negative',
                      },
                    ],
                  },
                  num: { type: 'number', maximum: 5 },
                  port: { type: 'integer', format: 'int32', minimum: 1, maximum: 65535 },
                  mode: { type: 'string', enum: ['a', 'b'], default: 'a' },
                  name: { type: 'string', minLength: 1, maxLength: 3, pattern: '^[a-z]+$' },
                  ios: { 'x-kubernetes-int-or-string': true },
                  nul: { type: 'string', nullable: true },
                  emb: {
                    type: 'object',
                    'x-kubernetes-embedded-resource': true,
                    'x-kubernetes-preserve-unknown-fields': true,
                  },
                  set: {
                    type: 'array',
                    items: { type: 'string' },
                    'x-kubernetes-list-type': 'set',
                    maxItems: 3,
                  },
                  env: {
                    type: 'array',
                    'x-kubernetes-list-type': 'map',
                    'x-kubernetes-list-map-keys': ['name'],
                    items: {
                      type: 'object',
                      required: ['name'],
                      properties: { name: { type: 'string' }, value: { type: 'string' } },
                    },
                  },
                  mp: {
                    type: 'object',
                    maxProperties: 1,
                    additionalProperties: { type: 'integer' },
                  },
                  free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                },
              },
            },
          },
        },
      },
    ],
  },
}

/** A Probe with `spec` (and `req` set, so only what the case adds is wrong). */
export function probe(
  spec: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): KubeObject {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Probe',
    metadata: { name: 'p', namespace: 'ns' },
    spec: { req: 'x', ...spec },
    ...extra,
  }
}
