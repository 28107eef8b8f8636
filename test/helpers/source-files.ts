// The project's own TypeScript sources, parsed with the compiler's API: for tests that hold a
// rule about how `src/` is written (which file may call what), where a grep would also match
// comments and strings.

import { readFileSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

export interface SourceFile {
  /** Relative to the repository, with `/` (`src/cli/admit.ts`). */
  readonly path: string
  readonly source: ts.SourceFile
}

/** Every `.ts` file under `folder` (relative to the repository), parsed. */
export function sourceFiles(folder = 'src'): SourceFile[] {
  const files = readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .sort()
  return files.map((file) => {
    const path = relative(ROOT, join(ROOT, folder, file))
      .split('\\')
      .join('/')
    return parsedSource(path, readFileSync(join(ROOT, path), 'utf8'))
  })
}

/** `text` parsed as the file `path` (a test of a rule parses a few lines of its own). */
export function parsedSource(path: string, text: string): SourceFile {
  return { path, source: ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true) }
}

/** Every node of `source`, depth first. */
export function* nodesOf(source: ts.Node): Generator<ts.Node> {
  const stack: ts.Node[] = [source]
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    yield node
    stack.push(...[...node.getChildren()].reverse())
  }
}

/** `path:line` of a node, for a failure message. */
export function where({ path, source }: SourceFile, node: ts.Node): string {
  return `${path}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`
}
