/**
 * A child process for tests whose runs could block the event loop or eat memory on a regression:
 * runs each command line given (a JSON list of argument lists) in-process, one after another, as
 * test/helpers/cli.ts and serve-in-process.ts run them, and writes each outcome as a JSON line as
 * soon as it has it. The parent watches the child (a deadline, a resident bound), which a test
 * process cannot do for itself once its event loop is blocked.
 */

import { runCli } from './cli.ts'
import { serveInProcess } from './serve-in-process.ts'

const runs = JSON.parse(process.argv[2] ?? '[]') as string[][]
for (const args of runs) {
  const outcome = args[0] === 'serve' ? await serveInProcess(args.slice(1)) : await runCli(args)
  process.stdout.write(`${JSON.stringify(outcome)}\n`)
}
