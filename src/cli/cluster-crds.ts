/**
 * `check --kubeconfig FILE` and `review --kubeconfig FILE`: the CustomResourceDefinitions of
 * ToolHive's group as the cluster serves them, for the same evaluation `--crds` files get. Only
 * the CRDs are read from the cluster (not the objects `--objects` stands for). Anything that
 * stops the read (the kubeconfig, the connection, a refusal, no ToolHive CRD at all) is one line
 * naming the server, exit 2: a CI job must not pass because the cluster could not be asked.
 *
 * This module reaches neither the CEL engine nor `@kubernetes/client-node` by itself: the
 * kubeconfig's client is imported by loadKubeconfigCredentials, the engine by crds.ts, each only
 * when asked for.
 */

import { KubeApi } from '../cluster/kube-api.ts'
import type { SourcedObject } from '../cluster/load-objects.ts'
import { TOOLHIVE_GROUP } from '../policy/kinds.ts'
import { isRecord } from '../policy/kube/object.ts'
import type { KubeObject } from '../policy/kube/object.ts'
import { errorMessage } from '../policy/messages/render.ts'
import { UsageError } from './io.ts'
import type { CliIo } from './io.ts'
import { loadKubeconfigCredentials } from './kubeconfig.ts'
import { StartupError } from './startup-errors.ts'

const CRDS_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions'
/**
 * CRDs per list page. A cluster may hold hundreds (ToolHive's own are up to some 500 KB each in
 * JSON): pages bound what one response holds, as kubectl's chunked lists (500 items) do.
 */
const PAGE_SIZE = 50
/** A page of large CRDs over a slow link takes longer than an admission-time read may. */
const REQUEST_TIMEOUT_MS = 30_000

/** The ToolHive CRDs the cluster of `kubeconfig` serves, each with where it was read. */
export async function readClusterCrds(
  kubeconfig: string,
  io: Pick<CliIo, 'env' | 'execTimeoutMs' | 'proxyStepTimeoutMs'>,
): Promise<SourcedObject[]> {
  let credentials
  try {
    credentials = await loadKubeconfigCredentials(
      { kind: 'kubeconfig', files: [kubeconfig], setting: '--kubeconfig', value: kubeconfig },
      { env: io.env, execTimeoutMs: io.execTimeoutMs },
    )
  } catch (error) {
    if (error instanceof StartupError) throw new UsageError(error.message)
    throw error
  }
  const { server } = credentials
  const api = new KubeApi(credentials, {
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    proxyStepTimeoutMs: io.proxyStepTimeoutMs,
  })
  let crds: KubeObject[]
  try {
    crds = await listToolHiveCrds(api)
  } catch (error) {
    // The API's error already says which request failed; the server is what the user can check.
    const reason = oneLine(errorMessage(error).replace(/^GET [^:\s]*: /, ''))
    throw new UsageError(
      `--kubeconfig ${kubeconfig}: cannot list the CustomResourceDefinitions of ${server}: ${reason}`,
    )
  } finally {
    api.close()
  }
  if (crds.length === 0) {
    throw new UsageError(
      `--kubeconfig ${kubeconfig}: ${server} has no CustomResourceDefinition of group ${TOOLHIVE_GROUP} (is the ToolHive operator's CRD chart installed?)`,
    )
  }
  // A CRD the evaluation cannot use names itself in the error; the server says where it was read.
  return crds.map((object) => ({ object, where: server }))
}

/** Every page of the list, keeping the CRDs of ToolHive's group, in the server's (name) order. */
async function listToolHiveCrds(api: KubeApi): Promise<KubeObject[]> {
  const kept: KubeObject[] = []
  let token: string | undefined
  do {
    const page = await api.get(CRDS_PATH, { limit: PAGE_SIZE, continue: token })
    if (page === undefined) throw new Error('404 not found (not a Kubernetes API server?)')
    if (!Array.isArray(page.items)) throw new Error('the answer is not a list')
    for (const item of page.items as unknown[]) {
      if (!isRecord(item) || !isRecord(item.spec) || item.spec.group !== TOOLHIVE_GROUP) continue
      // The API server leaves apiVersion and kind out of a list's items.
      kept.push({
        ...item,
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
      })
    }
    const next = isRecord(page.metadata) ? page.metadata.continue : undefined
    token = typeof next === 'string' && next !== '' ? next : undefined
  } while (token !== undefined)
  return kept
}

/** An API server's message may span lines; the error is one. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim()
}
