/** A KubeApi reading the cluster as `--kubeconfig FILE` does, for one test. */

import type { Test } from 'tap'
import { loadKubeconfigCredentials } from '../../src/cli/kubeconfig.ts'
import { KubeApi } from '../../src/cluster/kube-api.ts'

/** The credentials `--kubeconfig file` loads, in a KubeApi closed when the test ends. */
export async function kubeApiFromKubeconfig(
  t: Pick<Test, 'teardown'>,
  file: string,
  options?: ConstructorParameters<typeof KubeApi>[1],
): Promise<KubeApi> {
  const credentials = await loadKubeconfigCredentials({
    kind: 'kubeconfig',
    files: [file],
    setting: '--kubeconfig',
    value: file,
  })
  const api = new KubeApi(credentials, options)
  t.teardown(() => {
    api.close()
  })
  return api
}
