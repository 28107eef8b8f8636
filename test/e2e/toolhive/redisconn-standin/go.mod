// A local stand-in for github.com/stacklok/toolhive-core/redisconn, for mcp-admission's
// end-to-end tests only: the Go module proxy does not serve that module at any version, so
// test/e2e/toolhive/releases.ts builds thv-operator v0.55+ with a `replace` pointing here.
// See redisconn.go for what it implements.
module github.com/stacklok/toolhive-core/redisconn

go 1.26

require github.com/redis/go-redis/v9 v9.23.0
