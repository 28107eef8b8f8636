// `serve`'s options are made from the settings table: each entry shows in `serve --help` with its
// own help text, bounds, default and variable, and no option of serve but two is written by hand.
import t from 'tap'
import { SERVE_SETTINGS } from '../../src/cli/serve-settings.ts'
import { runCli } from '../helpers/cli.ts'

/** The help with every run of white space one space: commander may wrap long lines. */
async function serveHelp(): Promise<string> {
  const { code, stdout } = await runCli(['serve', '--help'])
  if (code !== 0) throw new Error(`serve --help exited ${code}`)
  return stdout.replace(/\s+/g, ' ')
}

t.test('every setting is in serve --help with its help text, default and variable', async (t) => {
  const help = await serveHelp()
  for (const [key, entry] of Object.entries(SERVE_SETTINGS)) {
    const takes = 'placeholder' in entry ? ` ${entry.placeholder}` : ''
    // The entry's own words, right after the flag: the option was made from this entry.
    t.ok(help.includes(` ${entry.flag}${takes} ${entry.help}`), `${entry.flag}: its help (${key})`)
    const envValues = 'placeholder' in entry ? '' : '=true|false'
    t.ok(help.includes(`(env: ${entry.env}${envValues})`), `${entry.flag}: ${entry.env}`)
    if (!('default' in entry)) continue
    const shown =
      typeof entry.default === 'string'
        ? `(default ${entry.default})`
        : `(default ${entry.default.cluster}; ${entry.default.local} with no cluster)`
    t.ok(help.includes(shown), `${entry.flag}: ${shown}`)
  }
})

t.test('the bounds are said once: a minimum on its line, the maximum under all', async (t) => {
  const help = await serveHelp()
  t.ok(
    help.includes('--cert-poll-interval <duration> certificate re-read interval, at least 100ms'),
  )
  t.ok(help.includes('--keep-alive-timeout <duration> idle keep-alive timeout, at least 90s'))
  t.ok(help.includes('at most 596h31m23.647s (2^31-1 ms, the longest a Node timer waits)'))
})

t.test('no option of serve is written by hand but --objects and --no-reconciler', async (t) => {
  const help = await serveHelp()
  const flags = [...help.matchAll(/ (--[a-z-]+)(?: <[^>]+>)? /g)].map((match) => match[1])
  const options = new Set(flags.filter((flag) => flag !== undefined))
  const fromTable = Object.values(SERVE_SETTINGS).map((entry) => entry.flag)
  t.same([...options].filter((flag) => !fromTable.some((tabled) => tabled === flag)).sort(), [
    '--help',
    '--no-reconciler',
    '--objects',
  ])
})
