/**
 * The README and the pages of docs/ link to each other and to files of the repository. Every
 * relative link must name a file that exists inside the repository, and a `#fragment` a heading of
 * the page it points to (its anchor as GitHub writes it), so moving a section cannot leave a link
 * dangling. Every docs page is reachable from the README.
 *
 * The code cites the docs the same way (`docs/enforcement.md#the-runconfig-checksum`), and only
 * documents a reader has: a file of the repository or a public URL. Every Markdown file named in
 * the repository's files must exist, with the heading its `#fragment` names, and nothing may cite
 * a document from outside the repository (an internal spec's `DESIGN §4.2`, `../shared/…`).
 */

import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const REPO = fileURLToPath(new URL('../../', import.meta.url))

/** A fenced code block, indented or not (as in a list item). */
const FENCED = /^[ \t]*(```|~~~)[^\n]*\n[\s\S]*?^[ \t]*\1[^\n]*$/gm

const PAGES = [
  'README.md',
  ...readdirSync(join(REPO, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
]

/** The text a reader sees as prose: fenced blocks and code spans removed (a `[0](x)` there is code). */
function prose(markdown: string): string {
  return markdown.replace(FENCED, '').replace(/`[^`]*`/g, '')
}

/** Inline links and images: `[text](target)` or `[text](target "title")`; text may span lines. */
function linkTargets(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(\s*<?([^\s)>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map(
    (match) => match[1] ?? '',
  )
}

/** A heading's anchor as GitHub makes it (github-slugger): lower case, punctuation dropped. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-')
}

/** Every anchor of a page: its ATX headings outside code blocks, repeats numbered as GitHub does. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  const outsideFences = markdown.replace(FENCED, '')
  for (const [, text = ''] of outsideFences.matchAll(/^#{1,6}[ \t]+(.*?)[ \t#]*$/gm)) {
    const base = slug(text)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    result.add(count === 0 ? base : `${base}-${count}`)
  }
  return result
}

t.test('anchors are GitHub’s', async (t) => {
  t.equal(slug('`review` and `check`'), 'review-and-check')
  t.equal(slug("The CRDs' schemas and CEL rules"), 'the-crds-schemas-and-cel-rules')
  t.equal(slug('Design notes: dependencies'), 'design-notes-dependencies')
  t.same([...anchors('# A\n\n```sh\n# not a heading\n```\n## A\n')], ['a', 'a-1'])
})

for (const page of PAGES) {
  t.test(`${page}: every relative link resolves inside the repository`, async (t) => {
    const text = readFileSync(join(REPO, page), 'utf8')
    const targets = linkTargets(text)
    t.ok(targets.length > 0, 'has links to check')
    for (const target of targets) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // https:, mailto: …: not the repository's
      const [rawPath = '', fragment] = target.split('#', 2)
      const path = decodeURIComponent(rawPath)
      if (path.startsWith('/')) {
        t.fail(`${target}: an absolute path; links are relative to the page`)
        continue
      }
      const file = path === '' ? join(REPO, page) : resolve(REPO, dirname(page), path)
      const inside = relative(REPO, file)
      if (inside.startsWith('..') || inside.startsWith(sep)) {
        t.fail(`${target}: points outside the repository (${file})`)
        continue
      }
      if (!existsSync(file)) {
        t.fail(`${target}: ${inside} does not exist`)
        continue
      }
      if (fragment === undefined) continue
      if (!statSync(file).isFile() || !file.endsWith('.md')) {
        t.fail(`${target}: an anchor into ${inside}, which is not a Markdown page`)
        continue
      }
      t.ok(
        anchors(readFileSync(file, 'utf8')).has(fragment),
        `${target}: ${inside} has a heading #${fragment}`,
      )
    }
  })
}

t.test('every docs page is linked from the README', async (t) => {
  const linked = new Set(
    linkTargets(readFileSync(join(REPO, 'README.md'), 'utf8')).map((target) =>
      decodeURIComponent(target.split('#')[0] ?? ''),
    ),
  )
  for (const page of PAGES.filter((page) => page !== 'README.md')) {
    t.ok(linked.has(page), `${page} is linked`)
  }
})

/** A link into a Markdown file: a path ending in `.md`, and the `#fragment` if any. */
const MARKDOWN_REFERENCE = /(?<![\w./@-])((?:[\w.-]+\/)*[\w-][\w.-]*\.md)\b(?:#([\w-]+))?/g

/** A URL: whatever it names is not the repository's to check. */
const URL_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s)'"`<>\]]+/gi

/** Citations of documents a reader of the repository does not have. */
const OUTSIDE_DOCUMENTS: readonly { pattern: RegExp; why: string }[] = [
  { pattern: /\bDESIGN\b/, why: 'cites DESIGN, a document outside the repository' },
  { pattern: /\u00a7/, why: 'cites a numbered section (§) of a document outside the repository' },
  { pattern: /\.\.\/shared\//, why: 'names ../shared/, outside the repository' },
]

/** Where citations are: the repository's files under these folders, and these files. */
const CITING = ['src', 'test', 'bench', 'docs', 'manifests', 'tools', '.ci']
const CITING_FILES = ['README.md', 'eslint.config.js', 'Dockerfile', 'package.json']
const TEXT = /\.(ts|js|go|md|ya?ml|json|tpl|txt|sh)$|^\.ci\/[^/.]+$|^Dockerfile$/

/** This file spells out what it forbids, so it is the one file not scanned. */
const SELF = relative(REPO, fileURLToPath(import.meta.url))

/** The repository's text files that may cite a document, tracked or new (not ignored). */
function citingFiles(): string[] {
  const listed = execFileSync(
    'git',
    ['ls-files', '--cached', '--others', '--exclude-standard', '--', ...CITING, ...CITING_FILES],
    { cwd: REPO, encoding: 'utf8' },
  )
  return listed
    .split('\n')
    .filter((file) => TEXT.test(file) && file !== SELF && existsSync(join(REPO, file)))
    .sort()
}

const anchorsOf = new Map<string, Set<string>>()
/** The anchors of the Markdown file at `file`, read once. */
function pageAnchors(file: string): Set<string> {
  let found = anchorsOf.get(file)
  if (found === undefined) {
    found = anchors(readFileSync(file, 'utf8'))
    anchorsOf.set(file, found)
  }
  return found
}

/**
 * What is wrong with each document `text` (the contents of `file`) cites: a document from outside
 * the repository, or a Markdown path that names no file of the repository (from its root or from
 * `file`'s folder) or no heading of it. One line each, `file:line: …`.
 */
function citationProblems(file: string, text: string): string[] {
  const problems: string[] = []
  text.split('\n').forEach((line, index) => {
    const where = `${file}:${index + 1}`
    // A public URL is a document a reader has, whatever it is called.
    const local = line.replace(URL_TEXT, '')
    for (const { pattern, why } of OUTSIDE_DOCUMENTS) {
      if (pattern.test(local)) problems.push(`${where}: ${why}: ${line.trim()}`)
    }
    for (const [reference, path = '', fragment] of local.matchAll(MARKDOWN_REFERENCE)) {
      const target = [resolve(REPO, path), resolve(REPO, dirname(file), path)].find(
        (candidate) => !relative(REPO, candidate).startsWith('..') && existsSync(candidate),
      )
      if (target === undefined) {
        problems.push(`${where}: ${reference}: no such file in the repository`)
      } else if (fragment !== undefined && !pageAnchors(target).has(fragment)) {
        problems.push(
          `${where}: ${reference}: ${relative(REPO, target)} has no heading #${fragment}`,
        )
      }
    }
  })
  return problems
}

t.test('a citation is told apart from a good link', async (t) => {
  const design = ['DESIGN', '\u00a74.2'].join(' ')
  t.match(citationProblems('src/x.ts', `// ${design}: the rule`), [/src\/x.ts:1: cites DESIGN/])
  t.match(citationProblems('src/x.ts', 'x\n// see ../shared/notes'), [
    /src\/x.ts:2: names \.\.\/shared/,
  ])
  t.same(citationProblems('src/x.ts', '// docs/enforcement.md#a-slow-api-server'), [])
  t.match(citationProblems('src/x.ts', '// docs/enforcement.md#no-such-heading'), [
    /docs\/enforcement.md has no heading #no-such-heading/,
  ])
  t.match(citationProblems('src/x.ts', '// docs/nothing.md'), [/no such file/])
  // From the citing file's folder too, as a Markdown link is read.
  t.same(citationProblems('docs/x.md', '[A](wire.md#behaviour-on-the-wire)'), [])
  t.same(citationProblems('src/x.ts', '// https://example.com/DESIGN-notes/x.md#y'), [])
})

t.test('the repository cites only documents it holds, or public URLs', async (t) => {
  const files = citingFiles()
  t.ok(files.includes('src/policy/content-checksum.ts'), 'scans the sources')
  const problems = files.flatMap((file) =>
    citationProblems(file, readFileSync(join(REPO, file), 'utf8')),
  )
  t.same(problems, [], 'every citation resolves')
})
