/**
 * mcp-admission installed as `manifests/` ships it, with its certificates from real cert-manager
 * (the release's own controllers and cainjector, harness/cert-manager.ts) and the webhook
 * configurations unmodified: the API server reaches the Service through the service network and
 * verifies it with the caBundle cainjector wrote. Then the serving certificate is reissued, as
 * `cmctl renew` does it, and the service moves to the new pair without one failed admission.
 */

import { X509Certificate } from 'node:crypto'
import { join } from 'node:path'
import { Agent, request } from 'node:https'
import { connect } from 'node:tls'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import {
  certManagerBinary,
  certManagerCrdDir,
  projectSecretVolume,
  startCertManager,
} from './harness/cert-manager.ts'
import {
  SERVICE_NAMESPACE,
  startEnvironment,
  waitUntilWebhooksAreCalled,
} from './harness/environment.ts'
import type { RunningAdmission } from './harness/environment.ts'
import { mustKubectl } from './harness/kubectl.ts'
import { waitFor } from './harness/processes.ts'
import { freePort } from '../helpers/ports.ts'

const SERVICE = 'mcp-admission'
const SERVING_CERTIFICATE = 'mcp-admission-serving'
const SECRET = 'mcp-admission-tls'
const DNS_NAMES = [
  'mcp-admission.mcp-admission.svc',
  'mcp-admission.mcp-admission.svc.cluster.local',
]
const CHECKSUM = 'toolhive.stacklok.dev/content-checksum'

const started = Date.now()
const binary = await certManagerBinary()
// cert-manager's CRDs as the release ships them and ToolHive's, with a service network; then
// everything manifests/ renders (its own identity and webhooks, unmodified) and cert-manager.
const env = await startEnvironment(t, {
  serviceNetwork: true,
  crds: [await certManagerCrdDir(), 'fixtures'],
  identity: false,
  service: false,
})
const { plane, kubectl, network } = env
const running: { admission?: RunningAdmission } = {}
await mustKubectl(
  kubectl,
  ['apply', '--server-side', '-f', '-'],
  JSON.stringify({ apiVersion: 'v1', kind: 'List', items: await env.manifests() }),
)
const certManager = await startCertManager(plane, binary)
env.onStop(() => certManager.stop())
t.comment(
  `control plane, install and cert-manager up in ${((Date.now() - started) / 1000).toFixed(1)} s`,
)

interface Secret {
  data: Record<string, string>
}
async function secret(name: string): Promise<Secret> {
  const out = await mustKubectl(kubectl, [
    'get',
    'secret',
    name,
    '-n',
    SERVICE_NAMESPACE,
    '-o',
    'json',
  ])
  return JSON.parse(out) as Secret
}
const decode = (value: string | undefined) => Buffer.from(value ?? '', 'base64')

interface CertificateStatus {
  revision: number
  conditions?: { type: string; status: string }[]
}
async function certificateStatus(): Promise<CertificateStatus> {
  const out = await mustKubectl(kubectl, [
    'get',
    'certificate',
    SERVING_CERTIFICATE,
    '-n',
    SERVICE_NAMESPACE,
    '-o',
    'jsonpath={.status}',
  ])
  return JSON.parse(out) as CertificateStatus
}

interface WebhookConfiguration {
  metadata: { annotations?: Record<string, string> }
  webhooks: { name: string; clientConfig: { caBundle?: string; url?: string; service?: unknown } }[]
}
async function webhookConfigurations(): Promise<WebhookConfiguration[]> {
  return Promise.all(
    ['mutatingwebhookconfiguration', 'validatingwebhookconfiguration'].map(async (kind) => {
      const out = await mustKubectl(kubectl, ['get', kind, SERVICE, '-o', 'json'])
      return JSON.parse(out) as WebhookConfiguration
    }),
  )
}

/** The serial of the certificate the service presents to a client verifying it as the API server does. */
function servedSerial(port: number, caPem: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername: DNS_NAMES[0], ca: caPem })
    socket.setTimeout(5_000, () => socket.destroy(new Error('TLS handshake timed out')))
    socket.once('secureConnect', () => {
      const serial = socket.getPeerCertificate().serialNumber
      socket.end()
      resolve(serial)
    })
    socket.once('error', reject)
  })
}

interface Outcome {
  readonly ok: boolean
  readonly why: string
}

// Admissions go straight to the API server (as cluster admin, over kept-alive connections), so a
// loop of them is quick and several can be in flight at once.
const apiServer = new Agent({
  keepAlive: true,
  ca: plane.pki.caPem,
  cert: plane.pki.adminCertPem,
  key: plane.pki.adminKeyPem,
})
t.teardown(() => {
  apiServer.destroy()
})

/**
 * A RunConfig ConfigMap created with a server-side dry run: the API server stores nothing and
 * answers 201 with the checksum annotation only if the mutating webhook admitted it.
 */
function admit(namespace: string, index: number): Promise<Outcome> {
  const body = JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: `admission-${index}-runconfig`,
      namespace,
      labels: { 'toolhive.stacklok.io/component': 'run-config' },
    },
    data: { 'runconfig.json': `{"name": "admission-${index}"}` },
  })
  const url = `${plane.server}/api/v1/namespaces/${namespace}/configmaps?dryRun=All`
  return new Promise((resolve) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent: apiServer,
        headers: { 'content-type': 'application/json' },
        timeout: 15_000,
      },
      (response) => {
        let text = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => (text += chunk))
        response.once('end', () => {
          const annotations =
            response.statusCode === 201
              ? (JSON.parse(text) as { metadata: { annotations?: Record<string, string> } })
                  .metadata.annotations
              : undefined
          resolve(
            annotations?.[CHECKSUM]
              ? { ok: true, why: '' }
              : { ok: false, why: `${response.statusCode ?? '?'}: ${text.slice(0, 300)}` },
          )
        })
      },
    )
    req.once('timeout', () => req.destroy(new Error('no answer in 15 s')))
    req.once('error', (error) => {
      resolve({ ok: false, why: error.message })
    })
    req.end(body)
  })
}

let caPem = Buffer.alloc(0)
let servingSerial = ''
let admissionPort = 0
const certDir = join(plane.dir, 'projected-serving-certificate')

t.test('cert-manager issues the serving certificate for the Service', async (t) => {
  await mustKubectl(kubectl, [
    'wait',
    '--for=condition=Ready',
    '--timeout=60s',
    '-n',
    SERVICE_NAMESPACE,
    `certificate/${SERVING_CERTIFICATE}`,
    'certificate/mcp-admission-ca',
  ])
  const tls = await secret(SECRET)
  const leaf = new X509Certificate(decode(tls.data['tls.crt']))
  const ca = new X509Certificate(decode(tls.data['ca.crt']))
  t.same(
    (leaf.subjectAltName ?? '').split(', ').sort(),
    DNS_NAMES.map((name) => `DNS:${name}`).sort(),
    'the SANs are exactly the Service DNS names',
  )
  t.ok(ca.ca, 'ca.crt is a CA')
  t.notOk(leaf.ca, 'tls.crt is a leaf')
  t.ok(leaf.checkIssued(ca) && leaf.verify(ca.publicKey), 'tls.crt is signed by ca.crt')
  // The CA is the one the CA Certificate put in its own Secret.
  const caSecret = await secret('mcp-admission-ca')
  t.equal(decode(caSecret.data['tls.crt']).toString(), decode(tls.data['ca.crt']).toString())
  caPem = decode(tls.data['ca.crt'])
  servingSerial = leaf.serialNumber
})

t.test('cainjector writes that CA into every webhook of both configurations', async (t) => {
  t.ok(caPem.length > 0, 'the previous test found the CA')
  const configurations = await waitFor(
    'cainjector to fill every caBundle',
    async () => {
      const found = await webhookConfigurations()
      const all = found.flatMap((configuration) => configuration.webhooks)
      return all.every((webhook) => decode(webhook.clientConfig.caBundle).equals(caPem))
        ? found
        : undefined
    },
    { timeoutMs: 30_000, process: certManager, intervalMs: 250 },
  )
  t.equal(configurations.length, 2)
  for (const configuration of configurations) {
    t.equal(
      configuration.metadata.annotations?.['cert-manager.io/inject-ca-from'],
      `${SERVICE_NAMESPACE}/${SERVING_CERTIFICATE}`,
    )
    t.ok(configuration.webhooks.length > 0)
    for (const webhook of configuration.webhooks) {
      t.equal(decode(webhook.clientConfig.caBundle).toString(), caPem.toString(), webhook.name)
      // Unmodified: still the Service, never a URL.
      t.ok(webhook.clientConfig.service !== undefined && webhook.clientConfig.url === undefined)
    }
  }
})

t.test('the API server admits through the Service, trusting the injected CA', async (t) => {
  const tls = await secret(SECRET)
  // The Secret as the kubelet would mount it into the service's pod.
  await projectSecretVolume(certDir, {
    'tls.crt': decode(tls.data['tls.crt']),
    'tls.key': decode(tls.data['tls.key']),
    'ca.crt': decode(tls.data['ca.crt']),
  })
  admissionPort = await freePort()
  running.admission = await env.startAdmission({
    args: ['--cert-poll-interval=1s'],
    port: admissionPort,
    certDir,
  })
  t.equal(
    await servedSerial(admissionPort, caPem),
    servingSerial,
    'serving the Secret’s certificate',
  )

  await network.route(kubectl, SERVICE_NAMESPACE, SERVICE, 443, admissionPort)
  const namespace = `cert-manager-${Date.now().toString(36)}`
  await mustKubectl(kubectl, ['create', 'namespace', namespace])
  await waitUntilWebhooksAreCalled(kubectl, namespace)
  const before = network.connections(SERVICE_NAMESPACE, SERVICE, 443)
  t.ok(before > 0, `the API server dialled the Service (${before} connections)`)
  t.same(await admit(namespace, 0), { ok: true, why: '' })
  t.same(network.refused, [], 'the API server dialled nothing but the routed Service')
})

t.test('a reissued certificate is picked up with no failed admission', async (t) => {
  const admission = running.admission
  if (admission === undefined) throw new Error('the service is not running')
  const namespace = `reissue-${Date.now().toString(36)}`
  await mustKubectl(kubectl, ['create', 'namespace', namespace])
  const oldLeaf = new X509Certificate(decode((await secret(SECRET)).data['tls.crt']))
  const oldStatus = await certificateStatus()

  // Admissions through the API server across the whole reissue: one at a time (with a breath
  // between them), or `width` at once, bounded in number and time.
  const outcomes: Outcome[] = []
  const loop = { stop: false, width: 1 }
  const deadline = Date.now() + 150_000
  const admissions = (async () => {
    let index = 0
    while (!loop.stop && outcomes.length < 5_000 && Date.now() < deadline) {
      const batch = Array.from({ length: loop.width }, () => admit(namespace, ++index))
      outcomes.push(...(await Promise.all(batch)))
      await sleep(20)
    }
  })()
  try {
    await triggerReissue()
    const newTls = await waitFor(
      'the Secret to hold a new certificate',
      async () => {
        const tls = await secret(SECRET)
        const leaf = new X509Certificate(decode(tls.data['tls.crt']))
        return leaf.serialNumber !== oldLeaf.serialNumber ? tls : undefined
      },
      { timeoutMs: 60_000, process: certManager, intervalMs: 250 },
    )
    const newLeaf = new X509Certificate(decode(newTls.data['tls.crt']))
    t.not(newLeaf.serialNumber, oldLeaf.serialNumber, 'a new serial')
    t.not(
      newLeaf.publicKey.export({ format: 'pem', type: 'spki' }),
      oldLeaf.publicKey.export({ format: 'pem', type: 'spki' }),
      'a new key (rotationPolicy: Always)',
    )
    t.equal(decode(newTls.data['ca.crt']).toString(), caPem.toString(), 'the same CA')
    // The Certificate is Ready again on its next revision, with the Issuing condition cleared.
    await waitFor(
      'the Certificate to be Ready on its next revision',
      async () => {
        const status = await certificateStatus()
        const ready = status.conditions?.find((c) => c.type === 'Ready')?.status === 'True'
        const issuing = status.conditions?.some((c) => c.type === 'Issuing') ?? false
        return status.revision === oldStatus.revision + 1 && ready && !issuing ? true : undefined
      },
      { timeoutMs: 30_000, process: certManager, intervalMs: 250 },
    )

    const beforeSwap = outcomes.length
    await projectSecretVolume(certDir, {
      'tls.crt': decode(newTls.data['tls.crt']),
      'tls.key': decode(newTls.data['tls.key']),
      'ca.crt': decode(newTls.data['ca.crt']),
    })
    await waitFor(
      'the service to serve the new certificate',
      async () =>
        (await servedSerial(admissionPort, caPem)) === newLeaf.serialNumber ? true : undefined,
      { timeoutMs: 15_000, process: admission.process, intervalMs: 250 },
    )
    // The API server keeps its connection from before the swap (HTTP/1.1 keep-alive), which
    // still holds the old, still valid certificate. Admissions in parallel make it open more:
    // each new one verifies the new certificate against the injected caBundle.
    const connectionsAtSwap = network.connections(SERVICE_NAMESPACE, SERVICE, 443)
    const admittedAtSwap = outcomes.length
    loop.width = 8
    await waitFor(
      'the API server to open a connection after the swap',
      async () =>
        network.connections(SERVICE_NAMESPACE, SERVICE, 443) > connectionsAtSwap ? true : undefined,
      { timeoutMs: 30_000, intervalMs: 50 },
    )
    loop.width = 1
    // And on for a while before stopping.
    await waitFor(
      'admissions after the swap',
      async () => (outcomes.length >= admittedAtSwap + 50 ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 50 },
    )
    const opened = network.connections(SERVICE_NAMESPACE, SERVICE, 443) - connectionsAtSwap
    t.ok(opened > 0, `the API server opened ${opened} new connection(s) to the Service`)
    t.ok(beforeSwap > 0, `${beforeSwap} admissions before the new pair was projected`)
  } finally {
    loop.stop = true
    await admissions
  }
  const failed = outcomes.filter((outcome) => !outcome.ok)
  t.ok(outcomes.length >= 50, `${outcomes.length} admissions across the reissue`)
  t.same(failed, [], 'no admission failed')
  // The caBundle stays as it was: the CA did not change.
  for (const configuration of await webhookConfigurations())
    for (const webhook of configuration.webhooks)
      t.equal(decode(webhook.clientConfig.caBundle).toString(), caPem.toString(), webhook.name)
})

/**
 * What `cmctl renew` does: the Certificate's Issuing condition set to True (reason
 * ManuallyTriggered) through the status subresource; cert-manager's request manager issues
 * whenever that condition is True. Retried on a write conflict with the controllers.
 */
async function triggerReissue(): Promise<void> {
  await waitFor(
    'the Issuing condition to be set',
    async () => {
      const certificate = JSON.parse(
        await mustKubectl(kubectl, [
          'get',
          'certificate',
          SERVING_CERTIFICATE,
          '-n',
          SERVICE_NAMESPACE,
          '-o',
          'json',
        ]),
      ) as {
        metadata: { generation: number }
        status: { conditions?: Record<string, unknown>[] }
      }
      const conditions = (certificate.status.conditions ?? []).filter(
        (c) => c['type'] !== 'Issuing',
      )
      conditions.push({
        type: 'Issuing',
        status: 'True',
        reason: 'ManuallyTriggered',
        message: 'Certificate re-issuance manually triggered',
        lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        observedGeneration: certificate.metadata.generation,
      })
      certificate.status.conditions = conditions
      const result = await kubectl(
        ['replace', '--subresource=status', '-f', '-'],
        JSON.stringify(certificate),
      )
      return result.code === 0 ? true : undefined
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  )
}
