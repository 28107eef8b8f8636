/**
 * What `npm run bench:cluster` measures and how much of it. `BENCH_QUICK=1` uses small views and
 * few writes, for trying changes to the benchmark itself (its numbers are rough).
 */

const quick = process.env['BENCH_QUICK'] === '1'

export const CLUSTER_CONFIG = {
  quick,
  /** MCPServers stored (each with its RunConfig ConfigMap), grown in this order. */
  viewSizes: quick ? [300, 1_500] : [1_000, 10_000, 100_000],
  /** The view size at which the write latencies are measured. */
  latencyAt: quick ? 1_500 : 10_000,
  /** Concurrency while storing the population through the API. */
  populateConcurrency: 32,
  /** `BENCH_POPULATE=api`: every size through the REST API (slow: see etcd.ts). */
  populateVia: process.env['BENCH_POPULATE'] === 'api' ? 'api' : 'bulk',
  /** Concurrent writers of the latency cells, and the writes per cell and round. */
  latency: {
    writers: [1, 32],
    writes: quick ? { 1: 20, 32: 160 } : { 1: 250, 32: 1_000 },
    /** Rounds, alternating without/with (ABBA): a drift of the machine falls on both. */
    rounds: 2,
    /** No cell runs longer than this, whatever the API server's pace. */
    deadlineMs: 60_000,
  },
  /** The burst: this many proxy Deployments re-applied with this many requests in flight. */
  burst: {
    deployments: quick ? 200 : 1_000,
    concurrency: 64,
    rounds: quick ? 1 : 2,
    deadlineMs: 120_000,
  },
  /**
   * The slow API server (issue 49), at the smallest view size after its normal burst: the burst
   * written as the operator while the services' reads of the API server go through a delaying
   * proxy that holds back this share of answers by `delayMs` (past the 2 s live-read deadline).
   */
  slowApi: {
    delayMs: 2_500,
    shares: [1, 0.1],
    deadlineMs: 120_000,
  },
  /** How often mcp-admission's RSS is read during a burst. */
  rssSampleMs: 100,
  /** mcp-admission must be ready by then (the goal at 100,000 servers is 30 s). */
  readyLimitMs: 240_000,
  /** The whole run is abandoned after this, and every child process with it. */
  watchdogMs: 40 * 60_000,
  /** Functions listed from a CPU profile. */
  profileTop: 12,
} as const

/**
 * The goals: issue 19's (latency at 32 writers, bursts, start-up), issue 27's (at rest, 1 writer)
 * and issue 39's (beside the Go peer; CPU per review at most the peer's).
 */
export const GOALS = {
  /** Webhook-added latency at 32 writers, as a share of the write's own p50 and p99. */
  addedP50Share: 0.3,
  addedP99Share: 0.5,
  /** Burst time with the webhooks ÷ without. */
  burstRatio: 1.3,
  /** RSS at ready, MiB, by view size (issue 27). */
  rssMiB: { 10_000: 100, 100_000: 400 } as Record<number, number>,
  /** Start-up peak RSS ÷ RSS at ready, at each view size with an RSS goal (issue 27). */
  startPeakRatio: 1.5,
  /** At one writer: mcp-admission's CPU ms per proxy Deployment write, and the added p50 (issue 27). */
  cpuMsPerWriteAt1: 1.5,
  addedP50MsAt1: 6,
  /** Start to ready, seconds, by view size. */
  readySeconds: { 100_000: 30 } as Record<number, number>,
  /** Beside the Go peer (issue 39): added p50 at 1 writer at most 1 ms over its; RSS ≤ 2× its. */
  addedP50OverPeerMs: 1,
  rssOverPeer: 2,
} as const
