/**
 * The shipped manifests against the real API server: the full install (with the cert-manager
 * component, validated by cert-manager's own CRDs of the release in harness/cert-manager.ts) and
 * the bare base pass a server-side dry run, so every object is one the API server accepts as
 * written.
 */

import { join, relative } from 'node:path'
import t from 'tap'
import { MANIFESTS_DIR, installCrds, renderBaseWith } from './harness/admission.ts'
import { certManagerCrdDir } from './harness/cert-manager.ts'
import { startControlPlane } from './harness/control-plane.ts'
import { kubectlFor, mustKubectl } from './harness/kubectl.ts'

const plane = await startControlPlane()
t.teardown(() => plane.stop())
const kubectl = kubectlFor(plane.kubeconfig)
// kubectl reads the directory's .yaml files (and skips its README).
await mustKubectl(kubectl, ['apply', '--server-side', '-f', await certManagerCrdDir()])
await mustKubectl(kubectl, [
  'wait',
  '--for=condition=Established',
  '--timeout=60s',
  'crd/certificates.cert-manager.io',
  'crd/issuers.cert-manager.io',
  'crd/clusterissuers.cert-manager.io',
])
await installCrds(kubectl)
// A dry run creates nothing, so the namespaced objects need their namespace for real.
await mustKubectl(kubectl, ['create', 'namespace', 'mcp-admission'])

for (const [name, dir] of [
  ['manifests/ (with cert-manager)', MANIFESTS_DIR],
  ['manifests/base', join(MANIFESTS_DIR, 'base')],
  [
    'manifests/components/network-policy on the base',
    join(MANIFESTS_DIR, 'components/network-policy'),
  ],
] as const) {
  t.test(`kubectl apply --dry-run=server accepts ${name}`, async (t) => {
    const rendered = dir.endsWith('network-policy')
      ? await renderBaseWith(kubectl, plane.dir, [relative(MANIFESTS_DIR, dir)])
      : await mustKubectl(kubectl, ['kustomize', dir])
    const result = await kubectl(
      ['apply', '--dry-run=server', '--server-side', '-f', '-'],
      rendered,
    )
    t.equal(result.code, 0, result.stderr)
    t.match(result.stdout, /deployment\.apps\/mcp-admission serverside-applied \(server dry run\)/)
  })
}
