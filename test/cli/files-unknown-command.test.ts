/**
 * A mistyped command. `serve` is the default command and takes no arguments, so commander
 * blamed serve ("too many arguments for 'serve'"); the command itself is what is unknown.
 */

import t from 'tap'
import { runCli } from '../helpers/cli.ts'

const UNKNOWN = (name: string): string =>
  `mcp-admission: unknown command '${name}' (commands: serve, review, check; see --help)\n`

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
