/**
 * `src/` names a ToolHive kind only through the kind table's constants (`KIND.MCPServer`), so a
 * kind's facts cannot hide in a branch on its name that the table does not know of. Every string
 * literal (and template without substitutions) equal to a kind name outside `src/policy/kinds.ts`
 * fails here; messages built with substitutions are free to name kinds.
 */

import { readFile, readdir } from 'node:fs/promises'
import { join, relative } from 'node:path'
import t from 'tap'
import ts from 'typescript'
import { TOOLHIVE_KIND_TABLE } from '../../src/policy/kinds.ts'

const ROOT = join(import.meta.dirname, '../..')
const TABLE_FILE = 'src/policy/kinds.ts'
const KIND_NAMES: ReadonlySet<string> = new Set(TOOLHIVE_KIND_TABLE.map((entry) => entry.kind))

/** `file:line: "text"` of every literal in `source` whose text is a kind name. */
function kindLiterals(file: string, source: string): string[] {
  const parsed = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    if (
      (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) &&
      KIND_NAMES.has(node.text)
    ) {
      const { line } = parsed.getLineAndCharacterOfPosition(node.getStart(parsed))
      found.push(`${file}:${line + 1}: ${JSON.stringify(node.text)}`)
    }
    ts.forEachChild(node, visit)
  }
  visit(parsed)
  return found
}

async function sourceFiles(folder: string): Promise<string[]> {
  const entries = await readdir(join(ROOT, folder), { recursive: true, withFileTypes: true })
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
    .sort()
}

t.test('src/ names ToolHive kinds only through the kind table', async (t) => {
  const files = (await sourceFiles('src')).filter((file) => file !== TABLE_FILE)
  t.ok(files.length > 100, 'every file of src/ is read')
  const found: string[] = []
  for (const file of files)
    found.push(...kindLiterals(file, await readFile(join(ROOT, file), 'utf8')))
  t.same(found, [], 'use KIND from src/policy/kinds.ts')
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
  t.same(kindLiterals('x.ts', source), [
    'x.ts:1: "MCPServer"',
    'x.ts:2: "VirtualMCPServer"',
    'x.ts:3: "MCPWebhookConfig"',
    'x.ts:4: "MCPRemoteProxy"',
  ])
})
