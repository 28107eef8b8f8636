/**
 * `serve` that cannot start, on the real process: one line on stderr naming the flag and value,
 * exit 2, and nothing left running (the process exits by itself; it is killed only if it hangs).
 * File problems are found before anything listens. More file problems, in-process, in
 * startup-files.test.ts (each process start costs seconds on a busy machine).
 */

import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import type { Server } from 'node:net'
import { join } from 'node:path'
import t from 'tap'
import type { Test } from 'tap'
import { spawnServe } from '../helpers/serve-process.ts'
import { runCli } from '../helpers/cli.ts'

// Each test starts the built server as a process (a dozen of them, a few seconds each on a busy
// machine): the file as a whole needs more than the suite's 60 s per file.
t.setTimeout(150_000)

/** Far longer than a failed start takes; a process still alive then has hung. */
const HANG_MS = 30_000

interface Exit {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `serve` with loopback ports of its own and no cluster unless `env` names one. */
async function serve(args: string[], env: Record<string, string> = {}): Promise<Exit> {
  const child = await spawnServe({
    args,
    env,
    logLevel: 'info',
    // SIGKILL: a SIGTERM would be a graceful stop, exit 0, hiding a process that had started.
    killAfterMs: HANG_MS,
  })
  const code = await child.exited
  return { code, stdout: child.text('stdout'), stderr: child.text('stderr') }
}

/** Exit 2 with exactly this line on stderr (so no stack trace either). */
function failedWith(t: Test, exit: Exit, line: string): void {
  t.equal(exit.code, 2, 'exit 2, by itself')
  t.equal(exit.stderr, `mcp-admission: ${line}\n`, 'one line naming the flag and value')
}

/** Nothing was bound: Fastify logs every listener it opens. */
function listenedNowhere(t: Test, exit: Exit): void {
  t.notMatch(exit.stdout, /Server listening at/, 'before anything listens')
}

/** A loopback port held by someone else for the test's duration. */
async function occupiedPort(t: Test): Promise<number> {
  const server: Server = createServer()
  await new Promise<void>((resolve) => {
    server.listen(0, '127.0.0.1', resolve)
  })
  t.teardown(
    () =>
      new Promise<void>((resolve) =>
        server.close(() => {
          resolve()
        }),
      ),
  )
  return (server.address() as { port: number }).port
}

t.test('--port in use: the probe listener is closed again, exit 2', async (t) => {
  const port = await occupiedPort(t)
  const exit = await serve(['--cert-dir', t.testdir(), '--port', String(port)])
  failedWith(t, exit, `--port ${port}: address already in use`)
})

t.test('--probe-port in use', async (t) => {
  const port = await occupiedPort(t)
  const exit = await serve(['--cert-dir', t.testdir(), '--probe-port', String(port)])
  failedWith(t, exit, `--probe-port ${port}: address already in use`)
})

t.test('--host that is no address of this machine', async (t) => {
  const exit = await serve(['--cert-dir', t.testdir(), '--host', '192.0.2.1'])
  failedWith(t, exit, '--host 192.0.2.1: address not available')
})

t.test('KUBECONFIG naming a missing file', async (t) => {
  const missing = join(t.testdir(), 'kubeconfig')
  const exit = await serve([], { KUBECONFIG: missing })
  failedWith(t, exit, `KUBECONFIG ${missing}: no such file`)
  listenedNowhere(t, exit)
})

t.test('--client-ca missing: no certificate generated, nothing listens', async (t) => {
  const dir = t.testdir()
  const certDir = join(dir, 'certs')
  const exit = await serve(['--cert-dir', certDir, '--client-ca', join(dir, 'ca.pem')])
  failedWith(t, exit, `--client-ca ${join(dir, 'ca.pem')}: no such file`)
  listenedNowhere(t, exit)
  t.notOk(existsSync(certDir), 'the cert dir is not created for a start that fails')
})

t.test('a boolean variable is read from the process environment, false as false', async (t) => {
  // Before: commander took any value of MCP_ADMISSION_RECONCILER_ONLY, `false` too, as on.
  const off = await serve(['--cert-dir', t.testdir()], {
    MCP_ADMISSION_RECONCILER_ONLY: 'false',
    MCP_ADMISSION_DRAIN_TIMEOUT: 'x',
  })
  t.equal(off.code, 2)
  t.equal(
    off.stderr,
    'mcp-admission: invalid configuration: MCP_ADMISSION_DRAIN_TIMEOUT: must be a duration such as 500ms, 5s or 1m30s, got "x"\n',
    'only the bad duration: reconciler-only stays off',
  )
  const malformed = await serve(['--cert-dir', t.testdir()], {
    MCP_ADMISSION_RECONCILER_ONLY: 'yes',
  })
  t.equal(malformed.code, 2)
  t.equal(
    malformed.stderr,
    'mcp-admission: invalid configuration: MCP_ADMISSION_RECONCILER_ONLY: must be true or false (also 1, 0, t, f, TRUE, FALSE, True, False), got "yes"\n',
  )
  listenedNowhere(t, malformed)
})

const SERVICE_ACCOUNT = '/var/run/secrets/kubernetes.io/serviceaccount'

t.test(
  'in-cluster variables without the service account files: exit 2, nothing listens',
  { skip: existsSync(SERVICE_ACCOUNT) ? `${SERVICE_ACCOUNT} exists here` : false },
  async (t) => {
    const exit = await serve(['--cert-dir', t.testdir()], {
      KUBERNETES_SERVICE_HOST: '127.0.0.1',
      KUBERNETES_SERVICE_PORT: '1',
    })
    failedWith(
      t,
      exit,
      `in-cluster credentials (KUBERNETES_SERVICE_HOST is set): ${SERVICE_ACCOUNT}/token: no such file; ${SERVICE_ACCOUNT}/ca.crt: no such file`,
    )
    listenedNowhere(t, exit)
  },
)

t.test('--validation-actions Deny,Warn: one line, exit 2, nothing listens', async (t) => {
  const exit = await serve(['--cert-dir', t.testdir(), '--validation-actions', 'Deny,Warn'])
  t.equal(exit.code, 2)
  t.equal(
    exit.stderr,
    'mcp-admission: invalid configuration: --validation-actions: Deny and Warn cannot be combined (a denial already returns its violations to the client); use Deny, Deny,Audit, Warn or Warn,Audit\n',
  )
  listenedNowhere(t, exit)
})

t.test('a long value is cut as a denial cuts one: the reason stays visible', async (t) => {
  // 3,000 characters in 15 names: a path the system takes, far past what a line shows.
  const long = join(t.testdir(), ...Array.from({ length: 15 }, () => 'x'.repeat(200)))
  const exit = await serve(['--cert-dir', long, '--client-ca', long])
  t.equal(exit.code, 2)
  t.match(
    exit.stderr,
    /^mcp-admission: --client-ca \S{200,300}…\(\d+ more bytes\): no such file\n$/,
  )
  const check = await runCli(['check', long])
  t.equal(check.code, 2)
  t.match(
    check.stderr,
    /^mcp-admission: \S{200,300}…\(\d+ more bytes\): no such file or directory\n$/,
  )
})

t.test('--shutdown-delay 600h, longer than a Node timer holds: one line, exit 2', async (t) => {
  // Before: taken, and Node fired the 600h timer after 1 ms, so SIGTERM had no delay at all.
  const exit = await serve(['--cert-dir', t.testdir(), '--shutdown-delay', '600h'])
  failedWith(
    t,
    exit,
    'invalid configuration: --shutdown-delay: must be at most 596h31m23.647s (2147483647 ms), got "600h"',
  )
  listenedNowhere(t, exit)
})

t.test('a path too long for the system is named once, cut, with the system reason', async (t) => {
  const long = join(t.testdir(), 'x'.repeat(5_000))
  const exit = await serve(['--cert-dir', t.testdir(), '--client-ca', long])
  t.equal(exit.code, 2)
  t.match(
    exit.stderr,
    /^mcp-admission: --client-ca \S{200,300}…\(\d+ more bytes\): name too long\n$/,
  )
})
