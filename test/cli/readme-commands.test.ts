/**
 * The README's "Try it" CLI commands run as written on a fresh clone: each `npm run -s cli -- …`
 * line is run (as `node src/main.ts …`, what the script runs, from the sources under test) and
 * must end as the README says: allowed (0), or denied (1) where its comment says so; never a
 * usage error or a crash.
 */

import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const REPO = fileURLToPath(new URL('../../', import.meta.url))
const README = readFileSync(`${REPO}README.md`, 'utf8')

/** The shell lines of the first ```sh block after the "Try it" heading. */
function tryItLines(): string[] {
  const section = README.slice(README.indexOf('## Try it'))
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? ''
  return block.split('\n').filter((line) => line.startsWith('npm run -s cli -- '))
}

const lines = tryItLines()

t.ok(lines.length >= 4, 'the README shows the CLI')
for (const line of lines) {
  t.test(line, async (t) => {
    const [command = '', comment] = line.split(/\s+#\s+/)
    const [argv = '', input] = command.replace('npm run -s cli -- ', '').split(' < ')
    const result = spawnSync(process.execPath, ['src/main.ts', ...argv.trim().split(/\s+/)], {
      cwd: REPO,
      encoding: 'utf8',
      timeout: 60_000,
      ...(input ? { input: readFileSync(`${REPO}${input.trim()}`) } : {}),
    })
    const expected = comment?.startsWith('denied') ? 1 : 0
    t.equal(result.status, expected, `exit ${expected}: ${result.stderr}`)
    t.notMatch(result.stderr, /\n\s+at /, 'no stack trace')
    t.ok(result.stdout.length > 0, 'prints something')
  })
}
