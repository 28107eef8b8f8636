/**
 * The generated sections of the chart's hand-written values files: a top-level key of values.yaml
 * with its comment, and a top-level property of values.schema.json, each put in place of the
 * committed one so that no other line moves, then formatted as `npm run format` leaves the file.
 */

import { isDeepStrictEqual } from 'node:util'
import { format, resolveConfig } from 'prettier'

export const VALUES = 'charts/mcp-admission/values.yaml'
export const VALUES_SCHEMA = 'charts/mcp-admission/values.schema.json'

/** Formatted as `npm run format` leaves the file at `path` (relative to manifests/). */
export async function formatted(
  path: string,
  text: string,
  parser: 'yaml' | 'json',
): Promise<string> {
  const file = new URL(`../../manifests/${path}`, import.meta.url).pathname
  const options = (await resolveConfig(file)) ?? {}
  return format(text, { ...options, parser })
}

/**
 * `values` (values.yaml's text) with the section of top-level `key` replaced by `section`: the
 * key's line, the comment lines right above it and its indented lines, up to the next line at
 * column 0 (a blank line, or the next key or comment, which stay). Throws when there is not
 * exactly one such key.
 */
export async function withValuesSection(
  values: string,
  key: string,
  section: readonly string[],
): Promise<string> {
  const lines = values.split('\n')
  const keys = lines.flatMap((line, index) => (line.startsWith(`${key}:`) ? [index] : []))
  if (keys.length !== 1)
    throw new Error(
      `manifests/${VALUES} has ${keys.length} top-level \`${key}:\` keys, not one: the generated section goes in place of it`,
    )
  const found = keys[0]!
  let start = found
  while (start > 0 && lines[start - 1]!.startsWith('#')) start--
  let end = found + 1
  while (end < lines.length && lines[end]!.startsWith(' ')) end++
  const text = [...lines.slice(0, start), ...section, ...lines.slice(end)]
  return formatted(VALUES, text.join('\n'), 'yaml')
}

/**
 * `schema` (values.schema.json's text) with its top-level property `key` replaced by `property`
 * (the JSON text of its value): the one written at the indent of the top-level properties,
 * replaced whole. Throws when there is none, or when it is not the property the schema's
 * `properties` then hold as `expected`.
 */
export async function withSchemaProperty(
  schema: string,
  key: string,
  property: string,
  expected: unknown,
): Promise<string> {
  // At the indent of the top-level properties (the definitions' too: `expected` tells them apart).
  const found = new RegExp(`^ {4}${JSON.stringify(key)}: \\{`, 'm').exec(schema)
  const end = found === null ? -1 : closingBrace(schema, found.index + found[0].length - 1)
  if (found === null || end === -1)
    throw new Error(`manifests/${VALUES_SCHEMA} has no top-level "${key}" property to generate`)
  const text = await formatted(
    VALUES_SCHEMA,
    `${schema.slice(0, found.index + 4)}${JSON.stringify(key)}: ${property}${schema.slice(end + 1)}`,
    'json',
  )
  const parsed = JSON.parse(text) as { properties?: Record<string, unknown> }
  if (!isDeepStrictEqual(parsed.properties?.[key], expected))
    throw new Error(`manifests/${VALUES_SCHEMA}: its "${key}" property is not a top-level one`)
  return text
}

/** The index of the brace that closes the one at `open`, skipping strings; -1 when none does. */
function closingBrace(text: string, open: number): number {
  let depth = 0
  for (let index = open; index < text.length; index++) {
    const char = text[index]
    if (char === '"') {
      for (index++; index < text.length && text[index] !== '"'; index++)
        if (text[index] === '\\') index++
    } else if (char === '{') depth++
    else if (char === '}' && --depth === 0) return index
  }
  return -1
}
