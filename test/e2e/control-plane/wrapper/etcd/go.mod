// Wrapper module for building etcd from the Go module proxy (see ../../binaries.ts). etcd's own
// go.mod replaces its sibling modules by relative paths, so `go install …@version` cannot work;
// the builder requires go.etcd.io/etcd/server/v3 at the version Kubernetes pins, and tidies.
module mcp-admission.local/e2e/etcd

go 1.25

tool go.etcd.io/etcd/server/v3
