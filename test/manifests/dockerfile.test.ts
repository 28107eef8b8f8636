/**
 * No image can be built here, so the Dockerfile is kept in step with the project by reading it:
 * the Node major it uses, the files it ships, the start command, the user.
 */

import { readFileSync } from 'node:fs'
import t from 'tap'

const root = new URL('../../', import.meta.url)
const dockerfile = readFileSync(new URL('Dockerfile', root), 'utf8')
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  engines: { node: string }
  bin: Record<string, string>
  files: string[]
  scripts: Record<string, string>
}

t.test('the Node major is the one package.json requires', async (t) => {
  const major = /ARG NODE_MAJOR=(\d+)/.exec(dockerfile)?.[1]
  t.equal(major, /(\d+)/.exec(pkg.engines.node)?.[1])
  t.match(
    dockerfile,
    /FROM gcr\.io\/distroless\/nodejs\$\{NODE_MAJOR\}-debian12:nonroot/,
    'no shell at run time',
  )
})

t.test('it runs what `npm start` runs, with serve as the default command', async (t) => {
  const [node, ...words] = (pkg.scripts['start'] ?? '').split(' ')
  const command = words.pop()
  const entry = words.pop()
  t.equal(node, 'node')
  t.equal(entry, pkg.bin['mcp-admission'])
  t.ok(words.length > 0 && words.every((word) => word.startsWith('--')), 'Node flags only')
  const argv = ['/nodejs/bin/node', ...words, entry].map((word) => JSON.stringify(word))
  t.ok(dockerfile.includes(`ENTRYPOINT [${argv.join(', ')}]`), 'the same Node flags and entry')
  t.ok(dockerfile.includes(`CMD ["${command}"]`))
})

t.test(
  'it ships the package files and production dependencies only, as a numeric user',
  async (t) => {
    for (const file of pkg.files)
      t.match(
        dockerfile,
        new RegExp(`COPY (--from=\\S+ )?\\S*${file} \\./${file}`),
        `ships ${file}/`,
      )
    t.match(dockerfile, /npm ci --omit=dev/)
    t.match(dockerfile, /^USER \d+:\d+$/m)
  },
)
