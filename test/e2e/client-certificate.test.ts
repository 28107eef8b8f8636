/**
 * --client-ca end to end: the API server presents its webhook client certificate (configured in
 * its admission configuration) and mcp-admission serves it; anyone without one is refused.
 */

import https from 'node:https'
import t from 'tap'
import { startEnvironment } from './harness/environment.ts'
import { mustKubectl } from './harness/kubectl.ts'

const env = await startEnvironment(t, { apiServerClientCertificate: true })

t.test('the API server, presenting its client certificate, gets answers', async (t) => {
  const ns = await env.namespace()
  const object = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'demo-runconfig',
      namespace: ns,
      labels: { 'toolhive.stacklok.io/component': 'run-config' },
    },
    data: { 'runconfig.json': '{}' },
  }
  await mustKubectl(env.kubectl, ['create', '-f', '-'], JSON.stringify(object))
  const stored = JSON.parse(
    await mustKubectl(env.kubectl, ['get', 'configmap', 'demo-runconfig', '-n', ns, '-o', 'json']),
  ) as {
    metadata: { annotations?: Record<string, string> }
  }
  t.match(stored.metadata.annotations?.['toolhive.stacklok.dev/content-checksum'], /^[0-9a-f]{64}$/)
})

t.test('a client that trusts the server but has no certificate is refused', async (t) => {
  // The same request with a client certificate would be answered: only the certificate differs.
  const answered = new Promise<number>((resolve, reject) => {
    const request = https.request(
      `${env.admission.admissionUrl}/mutate`,
      { method: 'POST', ca: env.admission.caPem },
      (response) => {
        response.resume()
        resolve(response.statusCode ?? 0)
      },
    )
    request.once('error', reject)
    request.end('{}')
  })
  await t.rejects(answered, 'no response without a client certificate')
})
