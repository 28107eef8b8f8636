/**
 * What `npm run bench` measures and for how long. `BENCH_QUICK=1` shortens every window and
 * skips the largest views, for trying changes to the benchmark itself (its numbers are rough).
 */

const quick = process.env.BENCH_QUICK === '1'

export const CONFIG = {
  quick,
  /** MCPServers in the view of the main measurements (each with its RunConfig ConfigMap). */
  servers: 10_000,
  /** Runs of every measurement; the report gives medians. */
  repeats: quick ? 1 : 3,
  /** Unrecorded saturated load per scenario and server before the first measurement. */
  primeMs: quick ? 500 : 2500,
  /** Closed loop on this many keep-alive connections. */
  saturated: { connections: 16, warmupMs: quick ? 500 : 700, durationMs: quick ? 1500 : 3000 },
  /** Open loop at these fractions of the floor's saturated rate (same review body). */
  rate: {
    connections: 64,
    fractions: [0.5, 0.9],
    warmupMs: 500,
    durationMs: quick ? 1500 : 2500,
  },
  /** Cost curves: one connection, closed loop (service latency without queueing). */
  curve: { warmupMs: 300, durationMs: quick ? 600 : 1500 },
  /** Review sizes of the Deployment-size curve, bytes. */
  deploymentSizes: [2, 8, 32, 128, 512, 1024].map((kib) => kib * 1024),
  /** MCPServers in the views of the view-size curve. */
  viewSizes: quick ? [1_000, 10_000] : [1_000, 3_000, 10_000, 100_000],
  /** Saturated scenario 1 under `node --cpu-prof`. */
  profile: { warmupMs: 1000, durationMs: quick ? 2000 : 4000, top: 10 },
  /** CPU milliseconds per phase of the micro-benchmark. */
  micro: { ms: quick ? 60 : 250 },
} as const
