import t from 'tap'
import type { Test } from 'tap'
import { resolveServeConfig } from '../../src/cli/serve-config.ts'
import { IN_CLUSTER_CERT_DIR, SERVE_SETTINGS } from '../../src/cli/serve-settings.ts'
import type { ServeConfig, ServeOptions } from '../../src/cli/serve-config.ts'
import { RULE_TABLE } from '../../src/policy/rules.ts'
import { runCli } from '../helpers/cli.ts'

const defaults = { samplesDir: '/pkg/samples/objects', devCertDir: '/repo/certs' }
const SERVE_RULES = RULE_TABLE.map((rule) => rule.name).join(', ')

t.test(
  'no cluster configured: the embedded default on loopback with development certificates',
  async (t) => {
    const result = resolveServeConfig({}, {}, defaults)
    t.ok('config' in result)
    if (!('config' in result)) return
    t.same(result.config.view, { kind: 'embedded', objects: ['/pkg/samples/objects'] })
    t.match(result.config.server, {
      host: '127.0.0.1',
      port: 9443,
      probeHost: '127.0.0.1',
      probePort: 8081,
      certDir: '/repo/certs',
      keepAliveTimeoutMs: 100_000,
    })
    t.equal(result.config.generateDevCertificates, true)
  },
)

const IN_POD = { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }

t.test('in a pod: all interfaces, the controller-runtime cert dir, the cluster view', async (t) => {
  const result = resolveServeConfig({}, IN_POD, defaults)
  t.match('config' in result && result.config, {
    view: { kind: 'cluster', credentials: { kind: 'in-cluster', host: '10.0.0.1', port: 443 } },
    server: { host: '0.0.0.0', certDir: IN_CLUSTER_CERT_DIR },
    generateDevCertificates: false,
  })
  const withKubeconfig = resolveServeConfig({}, { KUBECONFIG: '/k' }, defaults)
  t.match('config' in withKubeconfig && withKubeconfig.config.view, {
    kind: 'cluster',
    credentials: { kind: 'kubeconfig', files: ['/k'] },
  })
  const files = resolveServeConfig({ objects: ['a.yaml'] }, { KUBECONFIG: '/k' }, defaults)
  t.match('config' in files && files.config.view, { kind: 'files', objects: ['a.yaml'] })
})

t.test('every invalid setting is reported at once', async (t) => {
  const result = resolveServeConfig(
    {
      port: '70000',
      probePort: 'x',
      host: 'example.com',
      certPollInterval: 'soon',
      keepAliveTimeout: '30s',
      logLevel: 'loud',
      shutdownDelay: '-1s',
    },
    {},
    defaults,
  )
  t.ok('errors' in result)
  const errors = 'errors' in result ? result.errors : []
  t.same(errors.map((e) => e.split(':')[0]).sort(), [
    '--cert-poll-interval',
    '--host',
    '--keep-alive-timeout',
    '--log-level',
    '--port',
    '--probe-port',
    '--shutdown-delay',
  ])
  t.match(errors.join('\n'), /--keep-alive-timeout: must be at least 90000 ms, got "30s"/)
})

t.test('probe and webhook ports must differ', async (t) => {
  const result = resolveServeConfig({ port: '8081' }, {}, defaults)
  t.match('errors' in result && result.errors, [/--probe-port: must differ from --port/])
})

t.test('no cluster configured: no shutdown delay unless one is asked for', async (t) => {
  const embedded = resolveServeConfig({}, {}, defaults)
  t.match('config' in embedded && embedded.config.server, { shutdownDelayMs: 0 })
  const asked = resolveServeConfig({ shutdownDelay: '2s' }, {}, defaults)
  t.match('config' in asked && asked.config.server, { shutdownDelayMs: 2_000 })
  const inPod = resolveServeConfig({}, IN_POD, defaults)
  t.match('config' in inPod && inPod.config.server, { shutdownDelayMs: 5_000 })
  const withKubeconfig = resolveServeConfig({}, { KUBECONFIG: '/k' }, defaults)
  t.match('config' in withKubeconfig && withKubeconfig.config.server, { shutdownDelayMs: 5_000 })
})

t.test('the kubeconfig is named by where it came from, for start-up errors', async (t) => {
  const fromFlag = resolveServeConfig({ kubeconfig: '/f' }, { KUBECONFIG: '/e' }, defaults)
  t.match('config' in fromFlag && fromFlag.config.view, {
    credentials: { files: ['/f'], setting: '--kubeconfig', value: '/f' },
  })
  const fromEnv = resolveServeConfig({}, { KUBECONFIG: '/e' }, defaults)
  t.match('config' in fromEnv && fromEnv.config.view, {
    credentials: { files: ['/e'], setting: 'KUBECONFIG', value: '/e' },
  })
})

/** The config, or the test fails with the errors it got instead. */
function configOf(
  t: Test,
  options: ServeOptions,
  env: Record<string, string>,
): ServeConfig | undefined {
  const result = resolveServeConfig(options, env, defaults)
  if ('config' in result) return result.config
  t.fail(`expected a config, got ${JSON.stringify(result.errors)}`)
  return undefined
}

function errorsOf(options: ServeOptions, env: Record<string, string>): string[] {
  const result = resolveServeConfig(options, env, defaults)
  return 'errors' in result ? result.errors : []
}

const CLUSTER = { KUBECONFIG: '/k' }
const BOOLEAN_ERROR = (value: string) =>
  `MCP_ADMISSION_RECONCILER_ONLY: must be true or false (also 1, 0, t, f, TRUE, FALSE, True, False), got ${JSON.stringify(value)}`

t.test('a boolean variable is read as strconv.ParseBool reads it; empty is unset', async (t) => {
  const rows: readonly (readonly [string, 'reconciler' | 'all'])[] = [
    ['', 'all'],
    ['false', 'all'],
    ['False', 'all'],
    ['FALSE', 'all'],
    ['f', 'all'],
    ['F', 'all'],
    ['0', 'all'],
    ['true', 'reconciler'],
    ['True', 'reconciler'],
    ['TRUE', 'reconciler'],
    ['t', 'reconciler'],
    ['T', 'reconciler'],
    ['1', 'reconciler'],
  ]
  for (const [value, mode] of rows) {
    const config = configOf(t, {}, { ...CLUSTER, MCP_ADMISSION_RECONCILER_ONLY: value })
    t.equal(config?.mode, mode, `MCP_ADMISSION_RECONCILER_ONLY=${JSON.stringify(value)}`)
  }
})

t.test('a boolean variable that spells no boolean is refused, naming it', async (t) => {
  const hostile = [
    'yes',
    'no',
    'on',
    'off',
    'y',
    'n',
    ' true',
    'false ',
    'true\n',
    'tRUE',
    'fAlse',
    '2',
    '-1',
    '00',
    '01',
    '0x1',
    '1.0',
    'null',
    'undefined',
    '"false"',
    'ｔｒｕｅ', // full-width letters
    'true\u0000',
    ' ',
    'enabled',
  ]
  for (const value of hostile) {
    t.same(
      errorsOf({}, { ...CLUSTER, MCP_ADMISSION_RECONCILER_ONLY: value }),
      [BOOLEAN_ERROR(value)],
      `MCP_ADMISSION_RECONCILER_ONLY=${JSON.stringify(value)}`,
    )
  }
})

t.test('the flag wins over its variable; a false variable turns nothing on', async (t) => {
  const flag = configOf(
    t,
    { reconcilerOnly: true },
    { ...CLUSTER, MCP_ADMISSION_RECONCILER_ONLY: 'false' },
  )
  t.equal(flag?.mode, 'reconciler', '--reconciler-only beats MCP_ADMISSION_RECONCILER_ONLY=false')
  // Even a malformed variable is not read when the flag is given (as for every other setting).
  const overridden = configOf(
    t,
    { reconcilerOnly: true },
    { ...CLUSTER, MCP_ADMISSION_RECONCILER_ONLY: 'yes' },
  )
  t.equal(overridden?.mode, 'reconciler')
  // Off means off: no "needs a cluster" error, no conflict with --no-reconciler.
  t.equal(
    configOf(t, {}, { MCP_ADMISSION_RECONCILER_ONLY: 'false' })?.mode,
    'admission',
    'embedded default',
  )
  t.equal(
    configOf(t, { reconciler: false }, { ...CLUSTER, MCP_ADMISSION_RECONCILER_ONLY: '0' })?.mode,
    'admission',
    '--no-reconciler',
  )
  t.same(errorsOf({ reconciler: false }, { ...CLUSTER, MCP_ADMISSION_RECONCILER_ONLY: 'true' }), [
    'MCP_ADMISSION_RECONCILER_ONLY and --no-reconciler exclude each other',
  ])
  t.same(errorsOf({}, { MCP_ADMISSION_RECONCILER_ONLY: '1' }), [
    'MCP_ADMISSION_RECONCILER_ONLY: needs a cluster (in a pod or --kubeconfig) and no --objects',
  ])
})

t.test('every variable set to the empty string is unset', async (t) => {
  const unset = configOf(t, {}, {})
  for (const { env } of Object.values(SERVE_SETTINGS)) {
    t.same(configOf(t, {}, { [env]: '' }), unset, `${env}=""`)
  }
})

t.test(
  'a bad value from a variable is named by the variable, from a flag by the flag',
  async (t) => {
    const rows: readonly (readonly [keyof typeof SERVE_SETTINGS, string, RegExp])[] = [
      ['host', 'example.com', /must be an IP address/],
      ['probeHost', '0.0.0.0 ', /must be an IP address/],
      ['port', '9443x', /must be a port number from 0 to 65535, got "9443x"/],
      ['port', '-1', /must be a port number/],
      ['probePort', '65536', /must be a port number/],
      ['probePort', '1e3', /must be a port number/],
      ['certPollInterval', '5', /must be a duration/],
      ['certPollInterval', '1ms', /must be at least 100 ms/],
      ['shutdownDelay', '-1s', /must not be negative, got "-1s"/],
      ['drainTimeout', 'forever', /must be a duration/],
      ['keepAliveTimeout', '89s', /must be at least 90000 ms/],
      [
        'logLevel',
        'INFO',
        /must be one of fatal, error, warn, info, debug, trace, silent, got "INFO"/,
      ],
      ['logLevel', 'verbose', /must be one of/],
      ['leaderElectionNamespace', 'My_Namespace', /must be a namespace name/],
      ['leaderElectionNamespace', 'a'.repeat(64), /must be a namespace name/],
    ]
    for (const [key, value, reason] of rows) {
      const { flag, env } = SERVE_SETTINGS[key]
      const fromEnv = errorsOf({}, { [env]: value })
      t.equal(fromEnv.length, 1, `${env}=${JSON.stringify(value)}: one error`)
      t.match(fromEnv[0], new RegExp(`^${env}: ${reason.source}`), `${env} named`)
      const fromFlag = errorsOf({ [key]: value }, { [env]: value })
      t.match(fromFlag[0], new RegExp(`^${flag}: ${reason.source}`), `${flag} named`)
      // A good flag hides a bad variable, as the flag wins.
      t.same(errorsOf({ [key]: goodValue(key) }, { [env]: value }), [], `${flag} wins over ${env}`)
    }
  },
)

function goodValue(key: keyof typeof SERVE_SETTINGS): string {
  switch (key) {
    case 'host':
    case 'probeHost':
      return '127.0.0.1'
    case 'port':
      return '9443'
    case 'probePort':
      return '8081'
    case 'logLevel':
      return 'info'
    case 'leaderElectionNamespace':
      return 'mcp-admission'
    case 'keepAliveTimeout':
      return '100s'
    default:
      return '1s'
  }
}

t.test('every bad value of flags and variables is reported at once', async (t) => {
  const errors = errorsOf(
    { port: 'x', logLevel: 'loud', certPollInterval: 'soon' },
    {
      MCP_ADMISSION_PROBE_PORT: 'y',
      MCP_ADMISSION_HOST: 'nowhere',
      MCP_ADMISSION_DRAIN_TIMEOUT: '1 s',
      MCP_ADMISSION_RECONCILER_ONLY: 'yes',
      POD_NAMESPACE: 'UPPER',
      KUBECONFIG: ':',
    },
  )
  t.same(errors.map((e) => e.split(':')[0]).sort(), [
    '--cert-poll-interval',
    '--log-level',
    '--port',
    'KUBECONFIG',
    'MCP_ADMISSION_DRAIN_TIMEOUT',
    'MCP_ADMISSION_HOST',
    'MCP_ADMISSION_PROBE_PORT',
    'MCP_ADMISSION_RECONCILER_ONLY',
    'POD_NAMESPACE',
  ])
})

t.test('KUBECONFIG is a path list, as kubectl reads it; --kubeconfig is one file', async (t) => {
  const rows: readonly (readonly [string, readonly string[]])[] = [
    ['/a', ['/a']],
    ['/a:/b', ['/a', '/b']],
    ['/a::/b:', ['/a', '/b']],
    [':/a', ['/a']],
    ['/a:/b:/a', ['/a', '/b']],
    ['relative/config:/b', ['relative/config', '/b']],
    ['/with space/config', ['/with space/config']],
  ]
  for (const [value, files] of rows) {
    t.match(
      configOf(t, {}, { KUBECONFIG: value })?.view,
      { kind: 'cluster', credentials: { kind: 'kubeconfig', setting: 'KUBECONFIG', files, value } },
      `KUBECONFIG=${JSON.stringify(value)}`,
    )
  }
  for (const value of [':', '::', ':::']) {
    t.same(errorsOf({}, { KUBECONFIG: value }), [
      `KUBECONFIG: must name a kubeconfig file, got ${JSON.stringify(value)}`,
    ])
  }
  t.match(configOf(t, { kubeconfig: '/a:/b' }, {})?.view, {
    credentials: { setting: '--kubeconfig', files: ['/a:/b'] },
  })
  t.same(errorsOf({ kubeconfig: '' }, {}), ['--kubeconfig: must name a kubeconfig file, got ""'])
})

t.test('in a pod the API server port must be there too', async (t) => {
  const rows: readonly (readonly [string | undefined, string | undefined])[] = [
    ['443', undefined],
    ['6443', undefined],
    ['1', undefined],
    ['65535', undefined],
    [undefined, 'KUBERNETES_SERVICE_PORT: not set, but KUBERNETES_SERVICE_HOST is'],
    ['', 'KUBERNETES_SERVICE_PORT: not set, but KUBERNETES_SERVICE_HOST is'],
    ['0', 'KUBERNETES_SERVICE_PORT: must be a port number from 1 to 65535, got "0"'],
    ['65536', 'KUBERNETES_SERVICE_PORT: must be a port number'],
    ['https', 'KUBERNETES_SERVICE_PORT: must be a port number'],
    ['443 ', 'KUBERNETES_SERVICE_PORT: must be a port number'],
    ['-443', 'KUBERNETES_SERVICE_PORT: must be a port number'],
    ['tcp://10.0.0.1:443', 'KUBERNETES_SERVICE_PORT: must be a port number'],
  ]
  for (const [port, error] of rows) {
    const env: Record<string, string> = { KUBERNETES_SERVICE_HOST: '10.0.0.1' }
    if (port !== undefined) env.KUBERNETES_SERVICE_PORT = port
    const errors = errorsOf({}, env)
    if (error === undefined) t.same(errors, [], `KUBERNETES_SERVICE_PORT=${port}`)
    else t.match(errors, [error], `KUBERNETES_SERVICE_PORT=${JSON.stringify(port)}`)
  }
  // Not needed when the cluster is not read: a kubeconfig, or objects from files.
  t.same(errorsOf({}, { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBECONFIG: '/k' }), [])
  t.same(errorsOf({ objects: ['a.yaml'] }, { KUBERNETES_SERVICE_HOST: '10.0.0.1' }), [])
  // An empty host is no pod.
  t.equal(configOf(t, {}, { KUBERNETES_SERVICE_HOST: '' })?.view.kind, 'embedded')
})

t.test('start-up problems name the flag or variable that set the value', async (t) => {
  const fromEnv = configOf(t, {}, { MCP_ADMISSION_PORT: '9000', MCP_ADMISSION_CERT_DIR: '/c' })
  t.match(fromEnv?.serverNames, {
    port: 'MCP_ADMISSION_PORT',
    certDir: 'MCP_ADMISSION_CERT_DIR',
    host: '--host',
    clientCaFile: '--client-ca',
  })
  const fromFlag = configOf(t, { port: '9000' }, { MCP_ADMISSION_PORT: '9001' })
  t.match(fromFlag?.server, { port: 9000 })
  t.match(fromFlag?.serverNames, { port: '--port' })
})

t.test(
  'the operator service account: a name, or namespace/name; anything else refused',
  async (t) => {
    t.equal(
      configOf(t, {}, CLUSTER)?.operatorServiceAccount,
      'toolhive-system/toolhive-operator',
      "the default: the operator chart's account in ToolHive's install namespace",
    )
    const good = ['thv', 'toolhive-system/toolhive-operator', 'ops/a.b-c']
    for (const value of good) {
      t.equal(
        configOf(t, { operatorServiceAccount: value }, CLUSTER)?.operatorServiceAccount,
        value,
      )
    }
    t.equal(
      configOf(t, {}, { ...CLUSTER, MCP_ADMISSION_OPERATOR_SERVICE_ACCOUNT: 'ops/thv' })
        ?.operatorServiceAccount,
      'ops/thv',
      'from the environment',
    )
    const bad = ['', '/x', 'x/', 'a/b/c', 'Upper', 'ns.with.dots/x', 'x y', `${'a'.repeat(64)}/x`]
    for (const value of bad) {
      const errors = errorsOf({ operatorServiceAccount: value }, CLUSTER)
      t.same(
        errors,
        [
          `--operator-service-account: must be a service account name or namespace/name, got ${JSON.stringify(value)}`,
        ],
        JSON.stringify(value),
      )
    }
  },
)

t.test(
  'enforcement: Deny and apply by default, each setting from its flag or variable',
  async (t) => {
    const plain = resolveServeConfig({}, {}, defaults)
    t.same('config' in plain && plain.config.enforcement, {
      validationActions: ['Deny'],
      ruleActions: new Map(),
      mutationMode: 'apply',
    })
    const watching = resolveServeConfig(
      { validationActions: 'Warn,Audit', ruleActions: 'delete-guard=Deny;workload=Audit' },
      { MCP_ADMISSION_MUTATION_MODE: 'observe' },
      defaults,
    )
    t.same('config' in watching && watching.config.enforcement, {
      validationActions: ['Warn', 'Audit'],
      ruleActions: new Map([
        ['delete-guard', ['Deny']],
        ['workload', ['Audit']],
      ]),
      mutationMode: 'observe',
    })
  },
)

t.test('rule actions from the variable; the flag wins over it', async (t) => {
  const env = { MCP_ADMISSION_RULE_ACTIONS: 'delete-guard=Deny,Audit' }
  const fromEnv = resolveServeConfig({}, env, defaults)
  t.same(
    'config' in fromEnv && fromEnv.config.enforcement.ruleActions,
    new Map([['delete-guard', ['Deny', 'Audit']]]),
  )
  const fromFlag = resolveServeConfig({ ruleActions: 'webhook-config=Warn' }, env, defaults)
  t.same(
    'config' in fromFlag && fromFlag.config.enforcement.ruleActions,
    new Map([['webhook-config', ['Warn']]]),
    'the variable is not merged in',
  )
  const cleared = resolveServeConfig({ ruleActions: '' }, env, defaults)
  t.same(
    'config' in cleared && cleared.config.enforcement.ruleActions,
    new Map(),
    'an empty flag names no rule, whatever the variable says',
  )
})

t.test('--rule-actions repeated: every flag is read, as if joined with ";"', async (t) => {
  // In-process: the configuration is refused before anything is opened.
  const refused = await runCli([
    'serve',
    '--rule-actions',
    'workload=Deny',
    '--rule-actions',
    'delete-guard=Deny,Audit;webhook-config=Block',
  ])
  t.equal(refused.code, 2)
  t.equal(
    refused.stderr,
    'mcp-admission: invalid configuration:\n' +
      '  --rule-actions: workload: Deny not allowed for this rule, which never refuses a write; it allows Warn, Audit\n' +
      '  --rule-actions: webhook-config: must be Deny, Warn, Audit or a comma-separated combination, got "Block"\n',
  )
})

t.test('refused rule actions: one line each, naming the rule and what it allows', async (t) => {
  const refused = resolveServeConfig(
    {},
    { MCP_ADMISSION_RULE_ACTIONS: 'workload=Deny;delte-guard=Warn;delete-guard=Deny,Warn' },
    defaults,
  )
  t.same('errors' in refused && refused.errors, [
    'MCP_ADMISSION_RULE_ACTIONS: workload: Deny not allowed for this rule, which never refuses a write; it allows Warn, Audit',
    `MCP_ADMISSION_RULE_ACTIONS: no rule is named "delte-guard"; the rules are ${SERVE_RULES}`,
    'MCP_ADMISSION_RULE_ACTIONS: delete-guard: Deny and Warn cannot be combined (a denial already returns its violations to the client); use Deny, Deny,Audit, Warn or Warn,Audit',
  ])
})

t.test('refused enforcement settings name what set them', async (t) => {
  const refused = resolveServeConfig(
    {},
    { MCP_ADMISSION_VALIDATION_ACTIONS: 'Deny,Warn', MCP_ADMISSION_MUTATION_MODE: 'dry-run' },
    defaults,
  )
  t.same('errors' in refused && refused.errors, [
    'MCP_ADMISSION_VALIDATION_ACTIONS: Deny and Warn cannot be combined (a denial already returns its violations to the client); use Deny, Deny,Audit, Warn or Warn,Audit',
    'MCP_ADMISSION_MUTATION_MODE: must be one of apply, observe, got "dry-run"',
  ])
})
