/**
 * A mistyped command. `serve` is the default command and takes no arguments, so commander
 * blamed serve ("too many arguments for 'serve'"); the command itself is what is unknown.
 */

import t from 'tap'
import { runCli } from '../helpers/cli.ts'

const UNKNOWN = (name: string): string =>
  `mcp-admission: unknown command '${name}' (commands: serve, review, check, audit, release-status; see --help)\n`

t.test('an unknown command is named and the commands listed (exit 2)', async (t) => {
  for (const args of [['chek', 'x'], ['chek'], ['frobnicate', '--objects', 'x']]) {
    t.same(await runCli(args), { code: 2, stdout: '', stderr: UNKNOWN(args[0]!) }, args.join(' '))
  }
})

t.test('past serve options and their values, the first operand is the command', async (t) => {
  t.same(await runCli(['--port', '9443', 'chek']), { code: 2, stdout: '', stderr: UNKNOWN('chek') })
  t.same(await runCli(['--log-level=debug', 'chek']), {
    code: 2,
    stdout: '',
    stderr: UNKNOWN('chek'),
  })
  t.same(await runCli(['--', 'chek']), { code: 2, stdout: '', stderr: UNKNOWN('chek') })
})

t.test('commands, help and unknown options are left to commander', async (t) => {
  t.match(await runCli(['help']), { code: 0, stdout: /Commands:/ })
  t.match(await runCli(['--help']), { code: 0, stdout: /Commands:/ })
  t.match(await runCli(['--bogus', 'chek']), { code: 2, stderr: /unknown option '--bogus'/ })
  t.match(await runCli(['check']), { code: 2, stderr: /missing required argument 'paths'/ })
})

t.test('error lines on stderr are redacted and printable, whatever the argument', async (t) => {
  const cases: [string[], string][] = [
    [['check', 'https://admin:hunter2@example.com/objects.yaml'], 'hunter2'],
    [['check', '//user:s3cret@host/x.yaml'], 's3cret'],
    [['review', 'https://h/cb#access_token=tok3n'], 'tok3n'],
    [['serve', '--kubeconfig', 'https://u:pa55@h/k'], 'pa55'],
  ]
  for (const [args, secret] of cases) {
    const result = await runCli(args)
    t.equal(result.code, 2, args.join(' '))
    t.match(result.stderr, /^mcp-admission: /)
    t.notMatch(result.stderr, secret, `${args.join(' ')}: no secret`)
  }
  const forged = await runCli(['check', 'x.yaml\n0 objects checked, all admitted\u001b[2J'])
  t.equal(forged.code, 2)
  t.equal(forged.stderr.trimEnd().split('\n').length, 1, 'one line, no forged summary')
  t.notMatch(forged.stderr, '\u001b', 'no terminal escape')
})

t.test(
  "the argument parser's own errors read like every other: one prefixed line, exit 2",
  async (t) => {
    t.same(await runCli(['--bogus']), {
      code: 2,
      stdout: '',
      stderr: "mcp-admission: unknown option '--bogus'\n",
    })
    t.same(await runCli(['check']), {
      code: 2,
      stdout: '',
      stderr: "mcp-admission: missing required argument 'paths'\n",
    })
    t.same(await runCli(['audit', '-o', 'xml']), {
      code: 2,
      stdout: '',
      stderr:
        "mcp-admission: option '-o, --output <format>' argument 'xml' is invalid. Allowed choices are table, json, openreports, policyreport.\n",
    })
  },
)
