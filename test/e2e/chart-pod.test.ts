/**
 * The built image run as the Helm chart's pod runs it (harness/chart-pod.ts): the image's root
 * file system, read-only, and its own entrypoint, command, environment and working directory;
 * the rendered args, env, user and group; the serving certificate and the service account token
 * mounted at their paths in the kubelet's `..data` layout; the probes' ports and paths. So the
 * image and the in-cluster credentials are exercised as in a pod, against the real API server:
 * it is ready, admits, reads and writes with the chart's RBAC as its own service account, and
 * when the kubelet rotates the token and the old one is revoked, the next requests carry the new.
 */

import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises'
import https from 'node:https'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import fastJsonPatch from 'fast-json-patch'
import type { Operation } from 'fast-json-patch'
import t from 'tap'
import { parseAllDocuments } from 'yaml'
import { TOKEN_REREAD_MS } from '../../src/cluster/in-cluster-credentials.ts'
import { createDevCertificates } from '../../src/http/dev-certs.ts'
import { SERVICE_ACCOUNT_MOUNT, chartContainer, startChartPod } from './harness/chart-pod.ts'
import { MANIFESTS_DIR, startEnvironment } from './harness/environment.ts'
import { ensureHelm, helmFor, mustHelm } from './harness/helm.ts'
import { imageConfig, imageUnderTest, mountImage } from './harness/image.ts'
import { KubeletVolume } from './harness/kubelet-volume.ts'
import { mustKubectl } from './harness/kubectl.ts'
import { waitFor } from './harness/processes.ts'

const REPO = fileURLToPath(new URL('../../', import.meta.url))
const CHART = join(MANIFESTS_DIR, 'charts/mcp-admission')
const RELEASE = 'mcp-admission'
const NAMESPACE = 'mcp-admission'
const POD = 'mcp-admission-7d9f8-abcde'
const IDENTITY_KINDS = new Set([
  'ServiceAccount',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
])
const GENERATION = 'toolhive.stacklok.dev/mcpserver-generation'

type Json = Record<string, unknown>

const helmBinary =
  process.env['E2E_HELM'] ||
  (await ensureHelm((line) => {
    t.comment(line)
  }))
// The CRD fixtures; the identity is the chart's own (below) and mcp-admission runs as the chart's
// pod (harness/chart-pod.ts), which no option of the environment describes.
const { plane, kubectl } = await startEnvironment(t, { identity: false, service: false })
const helm = await helmFor(helmBinary, plane.kubeconfig)
t.teardown(() => helm.close())
const kubectlJson = async (args: readonly string[]) =>
  JSON.parse(await mustKubectl(kubectl, [...args, '-o', 'json'])) as Json
const apply = (object: Json) =>
  mustKubectl(kubectl, ['apply', '--server-side', '-f', '-'], JSON.stringify(object))

// What the chart renders with its defaults, and the image it runs.
const rendered = parseAllDocuments(
  await mustHelm(helm, ['template', RELEASE, CHART, '-n', NAMESPACE]),
).map((document) => document.toJS() as Json)
const container = chartContainer(rendered, { namespace: NAMESPACE, name: POD })
// The image's configuration and root file system, as a runtime reads them from the image.
const imageId = await imageUnderTest((line) => {
  t.comment(line)
})
const image = await imageConfig(imageId)
const rootfs = await mountImage(imageId)
// The pod first, then its root: the one teardown keeps that order.
let stopPod = async () => {}
t.teardown(async () => {
  await stopPod()
  await rootfs.remove()
})
const serviceAccount = rendered.find((object) => object['kind'] === 'ServiceAccount') as {
  metadata: { name: string }
}

// The cluster side: the namespace, and the chart's own ServiceAccount and RBAC.
await mustKubectl(kubectl, ['create', 'namespace', NAMESPACE])
for (const object of rendered.filter((o) => IDENTITY_KINDS.has(String(o['kind']))))
  await apply(object)

/** A token for the chart's ServiceAccount bound to a new Secret: deleting the Secret revokes it. */
async function boundToken(secret: string): Promise<string> {
  await mustKubectl(kubectl, ['create', 'secret', 'generic', secret, '-n', NAMESPACE])
  const args = ['create', 'token', serviceAccount.metadata.name, '-n', NAMESPACE]
  const bound = ['--bound-object-kind=Secret', `--bound-object-name=${secret}`, '--duration=1h']
  return (await mustKubectl(kubectl, [...args, ...bound])).trim()
}

/** The API server's answer to `token` alone: 200 while valid, 401 once revoked. */
function statusWith(token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = https.get(
      `${plane.server}/api`,
      { ca: plane.pki.caPem, headers: { authorization: `Bearer ${token}` }, agent: false },
      (response) => {
        response.resume()
        resolve(response.statusCode ?? 0)
      },
    )
    request.once('error', reject)
  })
}

// The pod side: its volumes as the kubelet lays them out, owned by its fsGroup.
const podDir = await mkdtemp(join(plane.dir, 'pod-'))
const fsGroup = container.fsGroup ?? container.runAsGroup
const servingVolume = container.volumes['serving-certs'] as { secret: { defaultMode: number } }
const certificates = await createDevCertificates({ hosts: ['127.0.0.1'], validDays: 2 })
const servingCerts = await KubeletVolume.create(
  join(podDir, 'serving-certs'),
  { 'tls.crt': certificates.cert, 'tls.key': certificates.key, 'ca.crt': certificates.ca },
  { mode: servingVolume.secret.defaultMode, gid: fsGroup },
)
const firstToken = await boundToken('token-binding-1')
const accountFiles = (token: string) => ({ token, 'ca.crt': plane.pki.caPem, namespace: NAMESPACE })
// kube-api-access-*: a projected volume with defaultMode 0644, as the ServiceAccount plugin adds it.
const account = await KubeletVolume.create(
  join(podDir, 'serviceaccount'),
  accountFiles(firstToken),
  {
    mode: 0o644,
    gid: fsGroup,
  },
)

const ports = container.ports as { webhook: number; probes: number }
for (const port of [ports.webhook, ports.probes]) await assertFree(port)
const pod = await startChartPod({
  container,
  image,
  root: rootfs.root,
  volumes: { 'serving-certs': servingCerts.dir },
  serviceAccountDir: account.dir,
  kubeletEnv: {
    KUBERNETES_SERVICE_HOST: '127.0.0.1',
    KUBERNETES_SERVICE_PORT: new URL(plane.server).port,
    HOSTNAME: POD,
  },
  logFile: join(podDir, 'pod.log'),
})
stopPod = () => pod.process.stop()
/** A path as the pod sees it: through its root, in its mount namespace. */
const inPod = (path: string) => join(`/proc/${pod.pid}/root`, path)

const probe = async (which: { port: number; path: string }) =>
  (await fetch(`http://127.0.0.1:${which.port}${which.path}`)).status
await waitFor(
  'the pod to be ready',
  async () => ((await probe(container.readinessProbe)) === 200 ? true : undefined),
  { timeoutMs: 60_000, process: pod.process },
)

t.test('it runs the image as the chart says: user, command, read-only root, mounts', async (t) => {
  const status = await readFile(`/proc/${pod.pid}/status`, 'utf8')
  const ids = (name: string) =>
    /^(\w+):\s+(.*)$/m.exec(status.split('\n').find((l) => l.startsWith(`${name}:`)) ?? '')?.[2]
  t.equal(ids('Uid'), Array(4).fill(container.runAsUser).join('\t'), 'runAsUser')
  t.equal(ids('Gid'), Array(4).fill(container.runAsGroup).join('\t'), 'runAsGroup')
  t.equal(ids('Groups')?.trim(), String(fsGroup), 'fsGroup as the only supplementary group')
  for (const set of ['CapInh', 'CapPrm', 'CapEff', 'CapAmb'])
    t.equal(ids(set), '0000000000000000', `no capabilities (${set})`)
  t.equal(ids('NoNewPrivs'), '1', 'no privilege escalation')
  const cmdline = (await readFile(`/proc/${pod.pid}/cmdline`, 'utf8')).split('\0').slice(0, -1)
  t.same(
    cmdline,
    [...image.entrypoint, ...(container.args ?? [])],
    "the image's entrypoint, the chart's args",
  )
  t.equal(image.entrypoint[0], '/nodejs/bin/node', "the image's own node")
  const environ = (await readFile(`/proc/${pod.pid}/environ`, 'utf8')).split('\0').slice(0, -1)
  t.same(
    environ.sort(),
    Object.entries(pod.env)
      .map(([name, value]) => `${name}=${value}`)
      .sort(),
    'the pod environment only',
  )
  for (const [name, value] of Object.entries(image.env))
    t.equal(pod.env[name], value, `the image's ${name}`)
  t.equal(image.workdir, '/app')
  // runAsUser/runAsGroup win over the image's USER; they agree, so either way it is 65532.
  t.equal(image.user, `${container.runAsUser}:${container.runAsGroup}`, "the image's USER")

  // The pod's root is the image's: no shell, the image's own files where the service runs.
  await t.rejects(readFile(inPod('/bin/sh')), { code: 'ENOENT' }, 'no shell')
  t.ok((await readdir(inPod(image.workdir))).includes('node_modules'), 'the image /app')
  t.equal(container.readOnlyRootFilesystem, true, 'the chart asks for a read-only root')
  for (const dir of [
    '/',
    '/tmp',
    image.workdir,
    '/nodejs',
    '/var/run/secrets',
    SERVICE_ACCOUNT_MOUNT,
  ]) {
    // As root, even: the mounts themselves are read-only.
    await t.rejects(
      writeFile(inPod(join(dir, 'chart-pod-write-probe')), ''),
      { code: 'EROFS' },
      `${dir} is not writable`,
    )
  }
  const namespace = await readFile(inPod(join(SERVICE_ACCOUNT_MOUNT, 'namespace')), 'utf8')
  t.equal(namespace, NAMESPACE, 'the service account volume is at its path')
  const certDir = container.env['MCP_ADMISSION_CERT_DIR'] ?? ''
  t.equal(container.volumeMounts[0]?.mountPath, certDir, 'the cert dir is the mounted Secret')
  t.ok((await readdir(inPod(certDir))).includes('..data'), 'in the kubelet layout')
})

t.test("it is ready and live on the chart's probe ports and paths", async (t) => {
  t.same(container.readinessProbe, { port: ports.probes, path: '/readyz' })
  t.equal(await probe(container.readinessProbe), 200)
  t.equal(await probe(container.livenessProbe), 200, `liveness ${container.livenessProbe.path}`)
})

t.test("it admits on the chart's webhook port", async (t) => {
  const review = JSON.parse(
    await readFile(join(REPO, 'samples/reviews/runconfig-configmap-create.json'), 'utf8'),
  ) as { request: { object: Json } }
  const object = admitted(review.request.object, await post('/mutate', review))
  t.equal(
    (object['metadata'] as { annotations: Record<string, string> }).annotations[
      'toolhive.stacklok.dev/content-checksum'
    ],
    '7220370996b543fcd3149832323a57477e6c9b8698fa3119831352da3487a989',
  )
})

t.test('it reads and writes as its service account, with the chart RBAC', async (t) => {
  await createMcpServer('before')
  await waitForCondition('before')
  t.equal(await generationStamped('before'), '1', 'a live read of the owner at admission')
  t.pass('the reconciler saw the MCPServer and stamped its status')
})

t.test('a rotated token replaces the revoked one at once', async (t) => {
  const rotated = Date.now()
  const leaseBefore = await renewTime()
  await account.update(accountFiles(await boundToken('token-binding-2')))
  await mustKubectl(kubectl, ['delete', 'secret', 'token-binding-1', '-n', NAMESPACE])
  // The API server caches a token's validity for seconds: wait until it refuses the old one.
  await waitFor(
    'the first token to be refused',
    async () => ((await statusWith(firstToken)) === 401 ? true : undefined),
    { timeoutMs: 30_000 },
  )
  t.pass('the first token is revoked')

  await mustKubectl(kubectl, [
    'patch',
    'mcpserver',
    'before',
    '-n',
    'default',
    '--type=merge',
    '-p',
    '{"spec":{"replicas":3}}',
  ])
  t.equal(await generationStamped('before'), '2', 'a live read after the revocation')
  await createMcpServer('after')
  await waitForCondition('after')
  t.pass('a new MCPServer is seen and its status written')
  await waitFor(
    'the Lease to be renewed',
    async () => ((await renewTime()) > leaseBefore ? true : undefined),
    { timeoutMs: 30_000 },
  )
  t.ok(Date.now() - rotated < TOKEN_REREAD_MS, 'before the token was due to be read again anyway')
  t.equal(await probe(container.readinessProbe), 200, 'still ready')

  const log = await readFile(pod.process.logFile, 'utf8')
  t.notMatch(log, firstToken.slice(-20), 'no token in the log')
  t.notMatch(log, /"level":50/, 'no error logged')
})

/** POSTs a review to the chart's webhook port, trusting the serving certificate's CA. */
function post(path: string, review: unknown): Promise<Json> {
  const body = JSON.stringify(review)
  return new Promise((resolve, reject) => {
    const request = https.request(
      `https://127.0.0.1:${ports.webhook}${path}`,
      { method: 'POST', ca: certificates.ca, headers: { 'content-type': 'application/json' } },
      (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.once('end', () => {
          resolve(JSON.parse(Buffer.concat(chunks).toString()) as Json)
        })
      },
    )
    request.once('error', reject)
    request.end(body)
  })
}

/** The object after the allowed review's patch. */
function admitted(object: Json, answer: Json): Json {
  const response = answer['response'] as { allowed: boolean; patch?: string; status?: unknown }
  if (!response.allowed) throw new Error(`denied: ${JSON.stringify(response.status)}`)
  const patch = JSON.parse(
    Buffer.from(response.patch ?? 'W10=', 'base64').toString(),
  ) as Operation[]
  return fastJsonPatch.applyPatch(structuredClone(object), patch).newDocument
}

async function createMcpServer(name: string): Promise<void> {
  await apply({
    apiVersion: 'toolhive.stacklok.dev/v1beta1',
    kind: 'MCPServer',
    metadata: { name, namespace: 'default' },
    spec: { image: 'ghcr.io/stackloklabs/fetch:latest', transport: 'stdio', replicas: 2 },
  })
  await apply({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: `${name}-runconfig`,
      namespace: 'default',
      labels: { 'toolhive.stacklok.io/component': 'run-config' },
    },
    data: { 'runconfig.json': `{"name":"${name}"}` },
  })
}

/** Waits for the reconciler's StdioReplicaCapped condition: a watch, then a status write. */
async function waitForCondition(name: string): Promise<void> {
  await waitFor(
    `the status of MCPServer ${name}`,
    async () => {
      const server = await kubectlJson(['get', 'mcpserver', name, '-n', 'default'])
      const conditions = ((server['status'] as Json | undefined)?.['conditions'] ?? []) as Json[]
      return conditions.some((c) => c['type'] === 'StdioReplicaCapped' && c['status'] === 'True')
        ? true
        : undefined
    },
    { timeoutMs: 30_000, process: pod.process },
  )
}

/** The generation the webhook stamps on a proxy Deployment for MCPServer `name`, read live. */
async function generationStamped(name: string): Promise<string | undefined> {
  const owner = await kubectlJson(['get', 'mcpserver', name, '-n', 'default'])
  const deployment = (parseAllDocuments(
    await readFile(join(REPO, 'samples/objects/demo-deployment.yaml'), 'utf8'),
  )[0]?.toJS() ?? {}) as Json
  const text = JSON.stringify(deployment).replaceAll('"demo', `"${name}`)
  const object = JSON.parse(text) as { metadata: { ownerReferences: Json[] } }
  for (const reference of object.metadata.ownerReferences)
    reference['uid'] = (owner['metadata'] as Json)['uid']
  const review = {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `review-${Date.now()}`,
      kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      resource: { group: 'apps', version: 'v1', resource: 'deployments' },
      name,
      namespace: 'default',
      operation: 'CREATE',
      userInfo: { username: 'system:serviceaccount:toolhive-system:toolhive-operator' },
      object,
    },
  }
  const patched = admitted(object, await post('/mutate', review))
  return ((patched['spec'] as { template: { metadata: { annotations?: Record<string, string> } } })
    .template.metadata.annotations ?? {})[GENERATION]
}

async function renewTime(): Promise<string> {
  const lease = await kubectlJson(['get', 'lease', 'mcp-admission-reconciler', '-n', NAMESPACE])
  return String((lease['spec'] as Json)['renewTime'])
}

/** The chart's fixed ports are the host's here: say so plainly when something holds one. */
function assertFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', (error) => {
      reject(new Error(`port ${port} (the chart's) is in use: ${error.message}`))
    })
    server.listen(port, '0.0.0.0', () =>
      server.close(() => {
        resolve()
      }),
    )
  })
}
