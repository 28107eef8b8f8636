/**
 * The README and the pages of docs/ link to each other and to files of the repository. Every
 * relative link must name a file that exists inside the repository, and a `#fragment` a heading of
 * the page it points to (its anchor as GitHub writes it), so moving a section cannot leave a link
 * dangling. Every docs page is reachable from the README.
 */

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
