// Wrapper module for the monitoring tests (see ../harness/prometheus.ts): the builder copies this
// file and main.go into its cache, requires github.com/prometheus/prometheus at the pinned release
// there and builds both promtool and this command against it, so no go.sum is kept here.
module mcp-admission.local/e2e/promql-selectors

go 1.26.0
