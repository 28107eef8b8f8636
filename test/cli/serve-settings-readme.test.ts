// Each `serve` default is stated once, in SERVE_SETTINGS: the help text is written from it, and the
// table of docs/configuration.md, where a reader looks them up, must say the same.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { SERVE_SETTINGS, defaultHelp } from '../../src/cli/serve-settings.ts'

/** The table of docs/configuration.md: flag → its environment and default cells. */
async function tableRows(): Promise<Map<string, { env: string; defaults: string }>> {
  const page = await readFile(new URL('../../docs/configuration.md', import.meta.url), 'utf8')
  const rows = new Map<string, { env: string; defaults: string }>()
  for (const line of page.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim())
    const flag = /^`(--[a-z-]+)`/.exec(cells[1] ?? '')?.[1]
    if (flag !== undefined && cells.length >= 5) {
      rows.set(flag, { env: cells[2] ?? '', defaults: cells[3] ?? '' })
    }
  }
  return rows
}

t.test('the Configuration table names every setting, its variable and its default', async (t) => {
  const rows = await tableRows()
  for (const [key, setting] of Object.entries(SERVE_SETTINGS)) {
    const row = rows.get(setting.flag)
    if (!row) {
      t.fail(`${setting.flag} is missing from the table of docs/configuration.md`)
      continue
    }
    t.equal(row.env, `\`${setting.env}\``, `${setting.flag}: its variable`)
    if (!('default' in setting)) continue
    const values: string[] =
      typeof setting.default === 'string'
        ? [setting.default]
        : [setting.default.cluster, setting.default.local]
    for (const value of values) {
      // The package's own certificate directory is `./certs` to a reader.
      const shown = value === 'certs/ of the package' ? './certs' : value
      t.ok(row.defaults.includes(`\`${shown}\``), `${setting.flag}: default ${shown} (${key})`)
    }
  }
})

t.test('the help text is written from the same defaults', async (t) => {
  t.equal(defaultHelp('port'), ' (default 9443)')
  t.equal(defaultHelp('shutdownDelay'), ' (default 5s; 0s with no cluster)')
  t.equal(defaultHelp('kubeconfig'), '', 'no default, nothing said')
})
