/**
 * docs/enforcement.md#the-runconfig-checksum: the RunConfig ConfigMap content checksum. Proxy
 * Deployments carry it in their pod template so pods roll whenever the RunConfig changes.
 */

import { createHash } from 'node:crypto'
import { ANNOTATIONS, RUNCONFIG_COMPONENT_LABEL, RUNCONFIG_COMPONENTS } from './names.ts'
import { ensureRecord, isRecord, setOwn, stringMap } from './kube/object.ts'
import type { KubeObject } from './kube/object.ts'
import type { FieldViolation } from './messages/field-errors.ts'
import type { MutationResult } from './result.ts'
import { wrongType } from './kube/value-checks.ts'

/** True for a ConfigMap labelled as a ToolHive RunConfig (or vMCP config). */
export function isRunConfigMap(object: KubeObject): boolean {
  if (object.kind !== 'ConfigMap') return false
  const labels = stringMap(object.metadata?.labels)
  const component = labels?.[RUNCONFIG_COMPONENT_LABEL]
  return (RUNCONFIG_COMPONENTS as readonly unknown[]).includes(component)
}

/**
 * Lowercase hex SHA-256 over data, labels and annotations (minus the checksum itself), each map
 * in UTF-8 byte order of its keys, key bytes then value bytes, no separators. `binaryData` is
 * not hashed. Returns violations when a map holds a non-string value.
 */
export function contentChecksum(
  configMap: KubeObject,
): { checksum: string } | { violations: FieldViolation[] } {
  const sections = [
    ['data', (configMap as { data?: unknown }).data],
    ['metadata.labels', configMap.metadata?.labels],
    ['metadata.annotations', configMap.metadata?.annotations],
  ] as const
  const violations: FieldViolation[] = []
  const hash = createHash('sha256')
  for (const [field, map] of sections) {
    if (map === undefined || map === null) continue
    if (!isRecord(map)) {
      // The type, not the value: a hostile value could be megabytes (and would be logged).
      violations.push(wrongType(field, map, 'object'))
      continue
    }
    for (const key of sortedByUtf8(Object.keys(map))) {
      if (field === 'metadata.annotations' && key === ANNOTATIONS.contentChecksum) continue
      const value = map[key]
      if (typeof value !== 'string') {
        violations.push(wrongType(`${field}[${key}]`, value, 'string'))
        continue
      }
      hash.update(key, 'utf8').update(value, 'utf8')
    }
  }
  return violations.length > 0 ? { violations } : { checksum: hash.digest('hex') }
}

/** The checksum a ConfigMap carries, or the one computed from its content when it carries none. */
export function effectiveContentChecksum(configMap: KubeObject): string | undefined {
  const stamped = stringMap(configMap.metadata?.annotations)?.[ANNOTATIONS.contentChecksum]
  if (stamped !== undefined && stamped !== '') return stamped
  const computed = contentChecksum(configMap)
  return 'checksum' in computed ? computed.checksum : undefined
}

/** Stamps the content checksum annotation on a RunConfig ConfigMap (mutates `configMap`). */
export function stampContentChecksum(configMap: KubeObject): MutationResult {
  const computed = contentChecksum(configMap)
  if ('violations' in computed) return { violations: computed.violations, warnings: [] }
  const metadata = ensureRecord(configMap, 'metadata')
  const annotations = ensureRecord(metadata, 'annotations')
  if (annotations[ANNOTATIONS.contentChecksum] !== computed.checksum) {
    setOwn(annotations, ANNOTATIONS.contentChecksum, computed.checksum)
  }
  return { object: configMap, warnings: [] }
}

/**
 * Sorts strings by their UTF-8 bytes. UTF-8 byte order equals code point order, which differs
 * from JavaScript's UTF-16 code unit order only when astral characters meet U+E000–U+FFFF.
 */
export function sortedByUtf8(keys: string[]): string[] {
  // Without surrogates, UTF-16 code unit order is code point order: the native sort is exact
  // and much faster than a comparator written in JavaScript.
  return keys.some(hasSurrogate) ? keys.sort(compareCodePoints) : keys.sort()
}

const SURROGATE = /[\uD800-\uDFFF]/

/** Whether `text` has a UTF-16 surrogate, i.e. a code point above U+FFFF. */
function hasSurrogate(text: string): boolean {
  return SURROGATE.test(text)
}

/** Code point order, which is UTF-8 byte order. */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x === y) continue
    // Surrogates (D800–DFFF) encode code points above FFFF, so they sort after E000–FFFF.
    const xs = x >= 0xd800 && x <= 0xdfff
    const ys = y >= 0xd800 && y <= 0xdfff
    if (xs !== ys) return xs ? 1 : -1
    return x - y
  }
  return a.length - b.length
}

/**
 * The mutation of docs/enforcement.md#the-runconfig-checksum: stamps RunConfig ConfigMaps, leaves
 * every other ConfigMap alone.
 */
export function mutateRunConfigMap(configMap: KubeObject): MutationResult {
  return isRunConfigMap(configMap)
    ? stampContentChecksum(configMap)
    : { object: configMap, warnings: [] }
}
