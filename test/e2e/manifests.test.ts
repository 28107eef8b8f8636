/**
 * The shipped manifests against the real API server: the full install (with the cert-manager
 * component, validated by cert-manager's own CRDs of the release in harness/cert-manager.ts) and
 * the bare base pass a server-side dry run, so every object is one the API server accepts as
 * written.
 */

import { join, relative } from 'node:path'
import t from 'tap'
import { certManagerCrdDir } from './harness/cert-manager.ts'
import {
  MANIFESTS_DIR,
  mustKubectl,
  renderBaseWith,
  startEnvironment,
} from './harness/environment.ts'

// cert-manager's CRDs (kubectl reads the directory's .yaml files and skips its README) and the
// ToolHive fixtures; nothing of the install itself, which the dry runs below check.
const { plane, kubectl } = await startEnvironment(t, {
  crds: [await certManagerCrdDir(), 'fixtures'],
  identity: false,
  service: false,
})
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
