/**
 * `src/` names a ToolHive kind only through the kind table's constants (`KIND.MCPServer`), so a
 * kind's facts cannot hide in a branch on its name that the table does not know of. Every string
 * literal (and template without substitutions) equal to a kind name outside `src/policy/kinds.ts`
 * fails here; messages built with substitutions are free to name kinds.
 */

import t from 'tap'
import ts from 'typescript'
import { TOOLHIVE_KIND_TABLE } from '../../src/policy/kinds.ts'
import { nodesOf, parsedSource, sourceFiles, where } from '../helpers/source-files.ts'
import type { SourceFile } from '../helpers/source-files.ts'

const TABLE_FILE = 'src/policy/kinds.ts'
const KIND_NAMES: ReadonlySet<string> = new Set(TOOLHIVE_KIND_TABLE.map((entry) => entry.kind))

/** `file:line: "text"` of every literal in `file` whose text is a kind name. */
function kindLiterals(file: SourceFile): string[] {
  return [...nodesOf(file.source)].flatMap((node) =>
    (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) &&
    KIND_NAMES.has(node.text)
      ? [`${where(file, node)}: ${JSON.stringify(node.text)}`]
      : [],
  )
}

t.test('src/ names ToolHive kinds only through the kind table', async (t) => {
  const files = sourceFiles('src').filter((file) => file.path !== TABLE_FILE)
  t.ok(files.length > 100, 'every file of src/ is read')
  t.same(files.flatMap(kindLiterals), [], 'use KIND from src/policy/kinds.ts')
})

t.test('what counts as naming a kind', async (t) => {
  const source = [
    "const a = 'MCPServer'",
    'const b = "VirtualMCPServer"',
    'const c = `MCPWebhookConfig`',
    "type D = 'MCPRemoteProxy' | 'ConfigMap'",
    'const e = `MCPServer ${name} not found`',
    "const f = 'MCPServers'",
    '// MCPServer in a comment',
    'const g = KIND.MCPServer',
  ].join('\n')
  t.same(kindLiterals(parsedSource('x.ts', source)), [
    'x.ts:1: "MCPServer"',
    'x.ts:2: "VirtualMCPServer"',
    'x.ts:3: "MCPWebhookConfig"',
    'x.ts:4: "MCPRemoteProxy"',
  ])
})
