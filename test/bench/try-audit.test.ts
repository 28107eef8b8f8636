// `npm run try:audit`, as a newcomer runs it: the stand-in API server, a temporary kubeconfig and
// the CLI's audit, which must name every planted finding, say so, and leave nothing behind.

import { spawn } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const REPO = fileURLToPath(new URL('../../', import.meta.url))

function tryAudit(cli: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bench/try-audit.ts', cli], {
      cwd: REPO,
      timeout: 60_000,
    })
    let [stdout, stderr] = ['', '']
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) => {
      resolve({ code, stdout, stderr })
    })
  })
}

t.test('the npm script runs it', async (t) => {
  const scripts = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).scripts
  t.equal(scripts['try:audit'], 'node bench/try-audit.ts')
})

t.test('the audit reports every planted finding in its table, and exits 0', async (t) => {
  // The sources under test; `npm run try:audit` runs dist/main.js, which `npm ci` builds from them.
  const { code, stdout, stderr } = await tryAudit('src/main.ts')
  t.equal(code, 0, stderr)
  t.match(stdout, /^DENY {3}MCPWebhookConfig default\/broken-hooks$/m, 'an invalid webhook config')
  t.match(stdout, /^PATCH {2}Deployment default\/demo$/m, 'a proxy Deployment lacking its checksum')
  t.match(stdout, /RunConfig checksum missing/, 'said why')
  t.match(
    stdout,
    /^PATCH {2}ConfigMap default\/demo-runconfig$/m,
    'a ConfigMap lacking its checksum',
  )
  t.match(stdout, /^WARN {3}MCPServer default\/scaled-stdio$/m, 'a stdio server at 3 replicas')
  t.match(stdout, /^KIND +AUDITED +DENY +PATCH +WARN +ERROR +CLEAN$/m, 'the summary table')
  t.match(stdout, /3 objects would be denied or changed by a write now/)
  t.match(stderr, /the planted findings were reported/)
  const kubeconfig = /--kubeconfig (\S+)/.exec(stderr)?.[1] ?? ''
  t.match(kubeconfig, /mcp-admission-try-audit-/, 'a temporary kubeconfig')
  t.notOk(existsSync(dirname(kubeconfig)), 'removed after')
})

t.test('an audit that misses a planted finding fails it, saying which', async (t) => {
  const cli = join(t.testdir(), 'silent-cli.js')
  writeFileSync(cli, 'process.exitCode = 1\n')
  const { code, stderr } = await tryAudit(cli)
  t.equal(code, 1)
  t.match(stderr, /FAILED/)
  t.match(stderr, /not reported: DENY {3}MCPWebhookConfig default\/broken-hooks/)
  t.notMatch(stderr, /the planted findings were reported/)
})
