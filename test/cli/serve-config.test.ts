import t from 'tap'
import { IN_CLUSTER_CERT_DIR, resolveServeConfig } from '../../src/cli/serve-config.ts'

const defaults = { samplesDir: '/pkg/samples/objects', devCertDir: '/repo/certs' }

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

t.test('in a pod: all interfaces, the controller-runtime cert dir, the cluster view', async (t) => {
  const result = resolveServeConfig({}, { KUBERNETES_SERVICE_HOST: '10.0.0.1' }, defaults)
  t.match('config' in result && result.config, {
    view: { kind: 'cluster' },
    server: { host: '0.0.0.0', certDir: IN_CLUSTER_CERT_DIR },
    generateDevCertificates: false,
  })
  const withKubeconfig = resolveServeConfig({}, { KUBECONFIG: '/k' }, defaults)
  t.match('config' in withKubeconfig && withKubeconfig.config.view, {
    kind: 'cluster',
    kubeconfig: '/k',
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
  const inPod = resolveServeConfig({}, { KUBERNETES_SERVICE_HOST: '10.0.0.1' }, defaults)
  t.match('config' in inPod && inPod.config.server, { shutdownDelayMs: 5_000 })
  const withKubeconfig = resolveServeConfig({}, { KUBECONFIG: '/k' }, defaults)
  t.match('config' in withKubeconfig && withKubeconfig.config.server, { shutdownDelayMs: 5_000 })
})

t.test('the kubeconfig is named by where it came from, for start-up errors', async (t) => {
  const fromFlag = resolveServeConfig({ kubeconfig: '/f' }, { KUBECONFIG: '/e' }, defaults)
  t.match('config' in fromFlag && fromFlag.config.view, {
    kubeconfig: '/f',
    kubeconfigSetting: '--kubeconfig',
  })
  const fromEnv = resolveServeConfig({}, { KUBECONFIG: '/e' }, defaults)
  t.match('config' in fromEnv && fromEnv.config.view, {
    kubeconfig: '/e',
    kubeconfigSetting: 'KUBECONFIG',
  })
})
