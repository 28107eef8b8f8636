/**
 * The status reconciler: every replica campaigns for the Lease; the leader feeds the key queue
 * from the cluster view's changes (and a full pass when it starts leading) and reconciles. On
 * losing the Lease the queue stops at once and no further write starts.
 */

import type { Logger } from 'pino'
import type { KubeApi } from '../cluster/kube-api.ts'
import type { KubeView } from '../cluster/kube-view.ts'
import { keyString } from '../cluster/view.ts'
import type { Metrics } from '../metrics/metrics.ts'
import { LeaderElector } from './leader-election.ts'
import type { LeaderElectionConfig } from './leader-election.ts'
import { KeyQueue } from './queue.ts'
import { RECONCILED_KINDS, createReconcile } from './reconcile.ts'
import type { ReconcileOutcome } from './reconcile.ts'

interface Reconciler {
  readonly isLeader: () => boolean
  stop(): Promise<void>
}

export function startReconciler(deps: {
  readonly api: KubeApi
  readonly view: KubeView
  readonly logger: Logger
  readonly metrics: Metrics
  readonly election: LeaderElectionConfig
}): Reconciler {
  const logger = deps.logger.child({ component: 'reconciler' })
  const { metrics, view } = deps
  const elector = new LeaderElector(deps.api, deps.election, deps.logger)
  let active: { queue: KeyQueue<ReconcileOutcome>; unsubscribe: () => void } | undefined

  const stopQueue = async () => {
    const current = active
    active = undefined
    current?.unsubscribe()
    await current?.queue.stop()
    metrics.reconcilerQueueDepth.set(0)
  }

  elector.start({
    onStartedLeading(signal) {
      metrics.reconcilerLeader.set(1)
      const queue = new KeyQueue<ReconcileOutcome>({
        onResult: (key, report, ms) => {
          const kind = key.split('/')[0] ?? ''
          const failed = report.result === 'retry' || report.result === 'threw'
          metrics.reconciles.inc({ kind, result: failed ? 'error' : 'done' })
          metrics.reconcileSeconds.observe({ kind }, ms / 1000)
          if (failed) logger.warn({ key, err: report.error }, 'reconcile failed; will retry')
          metrics.reconcilerQueueDepth.set(queue.depth)
        },
      })
      const reconcile = createReconcile({
        api: deps.api,
        view,
        logger,
        leadership: signal,
        onWrite: (kind) => {
          metrics.statusWrites.inc({ kind })
        },
        onYield: (kind, condition) => {
          metrics.statusFieldsYielded.inc({ kind, condition })
        },
      })
      queue.start(reconcile)
      const add = (key: string) => {
        queue.add(key)
        metrics.reconcilerQueueDepth.set(queue.depth)
      }
      const unsubscribe = view.onChange((key) => {
        if ((RECONCILED_KINDS as readonly string[]).includes(key.kind)) add(keyString(key))
      })
      active = { queue, unsubscribe }
      for (const kind of RECONCILED_KINDS) for (const key of view.keysOf(kind)) add(keyString(key))
    },
    onStoppedLeading() {
      metrics.reconcilerLeader.set(0)
      void stopQueue()
    },
  })

  return {
    isLeader: () => elector.isLeader,
    async stop() {
      await stopQueue()
      await elector.stop()
    },
  }
}
