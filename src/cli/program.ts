/**
 * The command line: `serve` (default), `review`, `check`, `audit` and `release-status`, with exit
 * codes 0/1/2.
 */

import { Command, CommanderError, InvalidArgumentError, Option } from 'commander'
import { readFileSync } from 'node:fs'
import { WEBHOOKS } from '../admission/review.ts'
import type { WebhookName } from '../admission/review.ts'
import { ObjectFileError } from '../cluster/load-objects.ts'
import { isLabelValue } from '../policy/kube/names.ts'
import { renderText } from '../policy/messages/render.ts'
import { AUDIT_REQUEST_TIMEOUT, auditCommand } from './audit.ts'
import type { GivenDuration } from './audit.ts'
import { AUDIT_HELP } from './audit-help.ts'
import { AUDIT_OUTPUTS, isReportOutput } from './audit-output.ts'
import type { AuditOutput } from './audit-output.ts'
import { CHECK_OUTPUTS, checkCommand } from './check.ts'
import { TOOLHIVE_GROUP } from '../policy/kinds.ts'
import type { CheckOutput } from './check.ts'
import { CRD_SOURCES_HELP, OBJECT_FILES_HELP } from './files-help.ts'
import { EXIT, UsageError } from './io.ts'
import type { CliIo } from './io.ts'
import { releaseStatusCommand } from './release-status.ts'
import { reviewCommand } from './review.ts'
import { serveCommand } from './serve.ts'
import { DURATIONS_HELP, SERVE_SETTINGS, settingHelp, settingOf } from './serve-settings.ts'
import { LONGEST_TIMER, timeoutValue } from './setting-values.ts'
import type { SettingKey } from './serve-settings.ts'
import type { ServeOptions } from './serve-config.ts'
import { StartupError } from './startup-errors.ts'

const { version } = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
) as { version: string }

const collect = (value: string, previous: string[] | undefined): string[] => [
  ...(previous ?? []),
  value,
]

/** `--crds`, `--kubeconfig` and `--strict`, the same for `check` and `review`. */
function withCrdOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--crds <path>',
        'CustomResourceDefinitions to evaluate objects of their kinds against, as the API server does (repeatable)',
      ).argParser(collect),
    )
    .addOption(
      new Option(
        '--kubeconfig <file>',
        `instead of --crds: use the CRDs of group ${TOOLHIVE_GROUP} this kubeconfig's cluster serves (only they are read from it)`,
      ),
    )
    .addOption(
      new Option('--strict', 'unknown fields are errors, not warnings (kubectl --validate=strict)'),
    )
}

/**
 * A setting of `serve` as commander's option, from its entry in the table: flag and help only.
 * The value is checked by resolveServeConfig with every other (no `.choices()`), so all problems
 * show at once; and the environment is read there, from io.env: commander's own `.env()` reads
 * process.env and takes any value of a boolean variable, `false` too, as true.
 */
function settingOption(key: SettingKey): Option {
  const { flag, placeholder, repeatable } = settingOf(key)
  const option = new Option(
    placeholder === undefined ? flag : `${flag} ${placeholder}`,
    settingHelp(key),
  )
  if (repeatable)
    option.argParser((value: string, previous: string | undefined) =>
      previous === undefined ? value : `${previous}${repeatable.joinedWith}${value}`,
    )
  // resolveServeConfig looks the value up by the table's key, where commander puts it by the flag.
  if (option.attributeName() !== key)
    throw new Error(`${flag} is handed over as ${option.attributeName()}, not ${key}`)
  return option
}

/** Runs the CLI; resolves to the exit code (serve resolves once it is listening). */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  let exitCode: number = EXIT.ok
  const program = new Command('mcp-admission')
    .description('Admission control for ToolHive MCP workloads on Kubernetes')
    .version(version)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      // commander's own errors (`error: unknown option '--x'`) read like every other error.
      outputError: (s, write) => {
        write(errorLines(s.replace(/^error: /, '').trimEnd()))
      },
    })

  const serve = program
    .command('serve', { isDefault: true })
    .description('serve the admission webhooks (HTTPS) and probes (HTTP)')
  for (const key of Object.keys(SERVE_SETTINGS) as SettingKey[]) serve.addOption(settingOption(key))
  serve
    // Not in the settings table: no variable sets them.
    .addOption(
      new Option(
        '--objects <path>',
        'serve an in-memory view of these YAML/JSON files (repeatable)',
      ).argParser(collect),
    )
    .addOption(new Option('--no-reconciler', 'serve admission only; do not write status'))
    .addHelpText('after', DURATIONS_HELP)
    .action(async (options: ServeOptions) => {
      try {
        exitCode = await serveCommand(options, io)
      } catch (error) {
        if (!(error instanceof StartupError)) throw error
        // Nothing was left running: the process exits by itself with this code.
        io.stderr.write(errorLines(error.message))
        exitCode = EXIT.usage
      }
    })

  withCrdOptions(program.command('review'))
    .description('evaluate one AdmissionReview JSON file (or - for stdin) and print the response')
    .argument('<review>', 'AdmissionReview JSON file, or - for standard input')
    .addOption(
      new Option('--objects <path>', 'objects the cluster holds (repeatable)').argParser(collect),
    )
    .addOption(
      new Option('--webhook <name>', 'which webhook answers').choices(WEBHOOKS).default('mutate'),
    )
    .addHelpText('after', OBJECT_FILES_HELP + CRD_SOURCES_HELP)
    .action(
      async (
        file: string,
        options: {
          objects?: string[]
          webhook: WebhookName
          crds?: string[]
          kubeconfig?: string
          strict?: boolean
        },
      ) => {
        exitCode = await reviewCommand(
          file,
          {
            objects: options.objects ?? [],
            webhook: options.webhook,
            crds: options.crds ?? [],
            kubeconfig: options.kubeconfig,
            strict: options.strict === true,
          },
          io,
        )
      },
    )

  withCrdOptions(program.command('check'))
    .description(
      'admit YAML/JSON files as CREATEs through mutation and validation; exit 1 if any is denied',
    )
    .argument('<paths...>', 'files or directories of objects to apply')
    .addOption(
      new Option('--objects <path>', 'objects the cluster already holds (repeatable)').argParser(
        collect,
      ),
    )
    .addOption(
      new Option('--namespace <ns>', 'namespace for objects that name none').default('default'),
    )
    .addOption(
      new Option('-o, --output <format>', 'text report, or the admitted objects')
        .choices(CHECK_OUTPUTS)
        .default('text'),
    )
    .addHelpText('after', OBJECT_FILES_HELP + CRD_SOURCES_HELP)
    .action(
      async (
        paths: string[],
        options: {
          objects?: string[]
          namespace: string
          output: CheckOutput
          crds?: string[]
          kubeconfig?: string
          strict?: boolean
        },
      ) => {
        exitCode = await checkCommand(
          paths,
          {
            objects: options.objects ?? [],
            namespace: options.namespace,
            output: options.output,
            crds: options.crds ?? [],
            kubeconfig: options.kubeconfig,
            strict: options.strict === true,
          },
          io,
        )
      },
    )

  program
    .command('audit')
    .description(
      'check every ToolHive object, RunConfig ConfigMap and proxy Deployment a cluster holds as if written now; exit 1 if a write would be denied or patched',
    )
    .addOption(
      new Option(
        '--kubeconfig <file>',
        'kubeconfig of the cluster to audit (default: KUBECONFIG, else in-cluster credentials)',
      ),
    )
    .addOption(
      new Option(
        '-o, --output <format>',
        'a table, one JSON document, or OpenReports Reports (openreports) or PolicyReports (policyreport) for kubectl apply -f -',
      )
        .choices(AUDIT_OUTPUTS)
        .default('table'),
    )
    .addOption(
      new Option(
        '--cluster-name <name>',
        'with -o openreports or policyreport: a label on each report and a property of each result (a label value)',
      ).argParser(givenClusterName),
    )
    .addOption(
      new Option(
        '--request-timeout <duration>',
        'the most one request may take, its whole answer included',
      )
        .argParser(givenTimeout)
        .default(givenTimeout(AUDIT_REQUEST_TIMEOUT), AUDIT_REQUEST_TIMEOUT),
    )
    .addOption(
      new Option(
        '--timeout <duration>',
        'the most the whole audit may take (default: no limit); past it, exit 2',
      ).argParser(givenTimeout),
    )
    .addHelpText('after', AUDIT_HELP)
    .action(
      async (options: {
        kubeconfig?: string
        output: AuditOutput
        clusterName?: string
        requestTimeout: GivenDuration
        timeout?: GivenDuration
      }) => {
        // Said, not ignored: a table or JSON has no place for it.
        if (options.clusterName !== undefined && !isReportOutput(options.output))
          throw new UsageError(
            `--cluster-name is for -o openreports or -o policyreport, not -o ${options.output}`,
          )
        exitCode = await auditCommand(options, io)
      },
    )

  program
    .command('release-status')
    .description(
      'before uninstalling: remove the validationStatus the reconciler wrote (VirtualMCPCompositeToolDefinition); exit 1 if a write failed',
    )
    .addOption(
      new Option(
        '--kubeconfig <file>',
        'kubeconfig of the cluster (default: KUBECONFIG, else in-cluster credentials)',
      ),
    )
    .action(async (options: { kubeconfig?: string }) => {
      exitCode = await releaseStatusCommand(options, io)
    })

  const unknown = unknownCommand(program, argv)
  if (unknown !== undefined) {
    io.stderr.write(errorLines(unknown))
    return EXIT.usage
  }
  try {
    await program.parseAsync(argv, { from: 'user' })
    return exitCode
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version exit 0; every other commander error is a usage error.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage
    }
    if (error instanceof UsageError || error instanceof ObjectFileError) {
      io.stderr.write(errorLines(error.message))
      return EXIT.usage
    }
    throw error
  }
}

/** `--cluster-name`: a label value, as the reports carry it in a label. */
function givenClusterName(text: string): string {
  if (!isLabelValue(text) || text === '')
    throw new InvalidArgumentError(
      `${JSON.stringify(text)} is not a label value (at most 63 letters, digits, '-', '_' or '.', beginning and ending with a letter or digit)`,
    )
  return text
}

/**
 * `--request-timeout` and `--timeout`, read as kubectl reads its `--request-timeout`; at least
 * 1 ms (kubectl takes 0 for no limit, which would let a request run for ever), at most a timer's
 * longest. A problem is commander's usage error (exit 2).
 */
function givenTimeout(text: string): GivenDuration {
  const read = timeoutValue({ min: '1ms', max: LONGEST_TIMER }).read(text)
  if (read.problem !== undefined) throw new InvalidArgumentError(read.problem)
  return { text, ms: read.value }
}

/**
 * `serve` is the default command and takes no arguments, so commander reads `mcp-admission chek
 * x` as serve with two extra arguments ("too many arguments for 'serve'"). The first operand,
 * found past serve's options and their values, names the command; if it names none, that is the
 * error. Help, version and an unknown option end the search: commander deals with those.
 */
function unknownCommand(program: Command, argv: readonly string[]): string | undefined {
  const commands = program.commands.map((c) => c.name())
  const known = new Set([...commands, ...program.commands.flatMap((c) => c.aliases()), 'help'])
  const serve = program.commands.find((c) => c.name() === 'serve')
  const options = [...program.options, ...(serve?.options ?? [])]
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? ''
    const operand = arg === '--' ? argv[i + 1] : arg === '-' || !arg.startsWith('-') ? arg : null
    if (operand !== null) {
      return operand === undefined || known.has(operand)
        ? undefined
        : `unknown command '${operand}' (commands: ${commands.join(', ')}; see --help)`
    }
    if (/^--[^=]+=/.test(arg)) continue // --flag=value
    const option = options.find((o) => o.long === arg || o.short === arg)
    if (option === undefined) return undefined // --help, or unknown: commander's to report
    if (option.required || option.optional) i++ // skip its value
  }
  return undefined
}

/**
 * An error for stderr: each of its lines (a configuration error lists one problem a line) with
 * secrets redacted, control characters escaped and bounded, like every string that leaves.
 */
function errorLines(message: string): string {
  return `mcp-admission: ${message
    .split('\n')
    .map((line) => renderText(line))
    .join('\n')}\n`
}
