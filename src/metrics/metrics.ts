/**
 * Prometheus metrics: one registry for the webhook, the certificate reload, the cluster view and
 * the reconciler, so it lives beside them rather than in http/ (which only records the webhook
 * series and serves /metrics). The webhook series mirror controller-runtime's names and labels
 * (pkg/webhook/internal/metrics) so existing dashboards and alerts work unchanged.
 */

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

export interface Metrics {
  readonly registry: Registry
  readonly latency: Histogram<'webhook'>
  readonly requests: Counter<'webhook' | 'code'>
  readonly inFlight: Gauge<'webhook'>
  readonly mutations: Counter<'resource' | 'changed' | 'writer' | 'mode'>
  readonly violations: Counter<'kind' | 'action'>
  readonly guardedDeletes: Counter<'kind' | 'protection'>
  readonly liveReadFallbacks: Counter<'kind'>
  readonly certificateNotAfter: Gauge
  readonly certificateReloads: Counter<'result'>
  readonly viewSynced: Gauge
  /** Makes `mcp_admission_cluster_view_synced` read `synced()` at every scrape. */
  reportViewSynced(synced: () => boolean): void
  /** Makes the per-kind series (served, degraded) read `kinds()` at every scrape. */
  reportKinds(kinds: () => KindStates): void
  readonly viewErrors: Counter<'kind'>
  readonly reconciles: Counter<'kind' | 'result'>
  readonly reconcileSeconds: Histogram<'kind'>
  readonly statusWrites: Counter<'kind'>
  readonly statusFieldsYielded: Counter<'kind' | 'condition'>
  readonly reconcilerQueueDepth: Gauge
  readonly reconcilerLeader: Gauge
}

/** What the cluster view says of each ToolHive kind, for the per-kind series. */
export interface KindStates {
  /** Every kind the service knows (the kind table), served or not. */
  readonly kinds: readonly string[]
  /** kind → the version it is served at; kinds absent are not served. */
  readonly served: ReadonlyMap<string, string>
  /** Served kinds whose cache readiness no longer waits for (their reads go live). */
  readonly degraded: ReadonlySet<string>
}

export function createMetrics(): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  // Computed when scraped, not when someone happens to call /readyz.
  let viewSyncedSource: (() => boolean) | undefined
  let kindsSource: (() => KindStates) | undefined
  // The version each kind was last served at, so a kind that goes away reads 0 there, not nothing.
  const lastServedAt = new Map<string, string>()
  new Gauge({
    name: 'mcp_admission_kind_served',
    help: '1 for the version each ToolHive kind is served at by the cluster (API discovery), 0 at the version it was last served at once it is not; version="" for a kind never served.',
    labelNames: ['kind', 'version'],
    registers: [registry],
    collect() {
      if (!kindsSource) return
      const states = kindsSource()
      this.reset()
      for (const kind of states.kinds) {
        const version = states.served.get(kind)
        if (version !== undefined) lastServedAt.set(kind, version)
        this.set({ kind, version: version ?? lastServedAt.get(kind) ?? '' }, version ? 1 : 0)
      }
    },
  })
  new Gauge({
    name: 'mcp_admission_cluster_view_degraded',
    help: '1 while a served kind is not cached because its list keeps failing (or is refused) past the grace period: readiness does not wait for it and its reads go to the API server.',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      if (!kindsSource) return
      const states = kindsSource()
      for (const kind of states.kinds) this.set({ kind }, states.degraded.has(kind) ? 1 : 0)
    },
  })
  return {
    registry,
    latency: new Histogram({
      name: 'controller_runtime_webhook_latency_seconds',
      help: 'Histogram of the latency of processing admission requests',
      labelNames: ['webhook'],
      // Finer than controller-runtime's defaults at the low end: admission here takes well under 1 ms.
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    requests: new Counter({
      name: 'controller_runtime_webhook_requests_total',
      help: 'Total number of admission requests by HTTP status code.',
      labelNames: ['webhook', 'code'],
      registers: [registry],
    }),
    inFlight: new Gauge({
      name: 'controller_runtime_webhook_requests_in_flight',
      help: 'Current number of admission requests being served.',
      labelNames: ['webhook'],
      registers: [registry],
    }),
    mutations: new Counter({
      name: 'mcp_admission_mutations_total',
      help: 'Mutating reviews admitted, by resource, whether the patch was not empty, whether the writer was the ToolHive operator\'s service account, and the mutation mode (apply: the patch was returned; observe: only computed). changed="true" with writer="operator" means the webhook rewrote (or, observing, would rewrite) what the operator wrote: it should stay 0.',
      labelNames: ['resource', 'changed', 'writer', 'mode'],
      registers: [registry],
    }),
    violations: new Counter({
      name: 'mcp_admission_violations_total',
      help: 'Rule violations found in admitted and denied writes, by kind and the action taken on them (deny, warn, audit: one count per violation per action, as --validation-actions says).',
      labelNames: ['kind', 'action'],
      registers: [registry],
    }),
    guardedDeletes: new Counter({
      name: 'mcp_admission_guarded_deletes_total',
      help: "Deletes of objects other objects still reference, by kind and protection: protected (the operator's finalizer holds the object for every referrer) or unprotected (the delete guard applies: what its Deny refuses, or would).",
      labelNames: ['kind', 'protection'],
      registers: [registry],
    }),
    liveReadFallbacks: new Counter({
      name: 'mcp_admission_live_read_fallbacks_total',
      help: "Proxy Deployment writes by the ToolHive operator's service account admitted with the stamps they carry because the live reads proving them current missed their deadline (a slow API server), by the owner's kind. Each such stamp may be stale until the operator's next write of that Deployment.",
      labelNames: ['kind'],
      registers: [registry],
    }),
    certificateNotAfter: new Gauge({
      name: 'mcp_admission_certificate_expiration_timestamp_seconds',
      help: 'Not-after time of the serving certificate in use, in seconds since the epoch.',
      registers: [registry],
    }),
    certificateReloads: new Counter({
      name: 'mcp_admission_certificate_reloads_total',
      help: 'Serving certificate reload attempts by result (loaded, rejected).',
      labelNames: ['result'],
      registers: [registry],
    }),
    viewSynced: new Gauge({
      name: 'mcp_admission_cluster_view_synced',
      help: '1 when the cluster view has synced and admission reads current objects, else 0.',
      registers: [registry],
      collect() {
        if (viewSyncedSource) this.set(viewSyncedSource() ? 1 : 0)
      },
    }),
    reportViewSynced(synced) {
      viewSyncedSource = synced
    },
    reportKinds(kinds) {
      kindsSource = kinds
    },
    viewErrors: new Counter({
      name: 'mcp_admission_cluster_view_errors_total',
      help: 'Failed lists and watches of the cluster view, by kind (each is retried with backoff).',
      labelNames: ['kind'],
      registers: [registry],
    }),
    reconciles: new Counter({
      name: 'mcp_admission_reconciles_total',
      help: 'Status reconciles by kind and result (done, error).',
      labelNames: ['kind', 'result'],
      registers: [registry],
    }),
    reconcileSeconds: new Histogram({
      name: 'mcp_admission_reconcile_duration_seconds',
      help: 'Time to reconcile one object, including the status write.',
      labelNames: ['kind'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers: [registry],
    }),
    statusWrites: new Counter({
      name: 'mcp_admission_status_writes_total',
      help: 'Status subresource writes (server-side apply) by kind.',
      labelNames: ['kind'],
      registers: [registry],
    }),
    statusFieldsYielded: new Counter({
      name: 'mcp_admission_status_fields_yielded_total',
      help: 'Status conditions (or validationStatus fields) left to another field manager that owns them, by kind and condition type or field (counted per reconcile).',
      labelNames: ['kind', 'condition'],
      registers: [registry],
    }),
    reconcilerQueueDepth: new Gauge({
      name: 'mcp_admission_reconciler_queue_depth',
      help: 'Keys waiting to be reconciled.',
      registers: [registry],
    }),
    reconcilerLeader: new Gauge({
      name: 'mcp_admission_reconciler_leader',
      help: '1 while this replica holds the reconciler Lease and writes status, else 0.',
      registers: [registry],
    }),
  }
}
