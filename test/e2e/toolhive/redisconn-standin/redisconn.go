// Package redisconn is a LOCAL STAND-IN for github.com/stacklok/toolhive-core/redisconn, used
// only by mcp-admission's end-to-end tests (test/e2e/toolhive/releases.ts) to build the ToolHive
// operator (thv-operator v0.55.0 and later). It exists because the Go module proxy does not serve
// that module at any version ("This module version is not available"), so the release cannot be
// built here as published. It is not ToolHive's code and is never shipped.
//
// It exposes exactly what toolhive v0.63.0 uses: Config, SentinelConfig, TLSConfig,
// BuildTLSConfig and NewClient, implemented for real on go-redis v9 (standalone, cluster and
// Sentinel clients, TLS 1.2+ with an optional CA bundle, default timeouts, a verifying PING).
// The operator links this package (through its run-config and session-storage packages) but
// never opens a Redis connection on the paths the suite tests.
package redisconn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
)

// Timeouts used when the corresponding Config field is zero.
const (
	DefaultDialTimeout  = 5 * time.Second
	DefaultReadTimeout  = 3 * time.Second
	DefaultWriteTimeout = 3 * time.Second
)

// Config describes one Redis deployment: Addr (standalone, or a seed node when ClusterMode is
// set) or SentinelConfig, never both.
type Config struct {
	Addr           string
	ClusterMode    bool
	SentinelConfig *SentinelConfig
	Username       string
	Password       string
	DB             int // ignored in cluster mode
	DialTimeout    time.Duration
	ReadTimeout    time.Duration
	WriteTimeout   time.Duration
	// TLS secures connections to Redis nodes, SentinelTLS those to the Sentinels; nil is plaintext.
	TLS         *TLSConfig
	SentinelTLS *TLSConfig
}

// SentinelConfig names a Sentinel-managed master and the Sentinels that know it.
type SentinelConfig struct {
	MasterName    string
	SentinelAddrs []string
}

// TLSConfig enables TLS; CACert (PEM) replaces the system roots when set.
type TLSConfig struct {
	InsecureSkipVerify bool
	CACert             []byte
}

// Validate checks that the configuration names exactly one topology.
func (c *Config) Validate() error {
	switch {
	case c == nil:
		return errors.New("config is nil")
	case c.Addr != "" && c.SentinelConfig != nil:
		return errors.New("addr and sentinel configuration are mutually exclusive")
	case c.Addr == "" && c.SentinelConfig == nil:
		return errors.New("addr or sentinel configuration is required")
	case c.ClusterMode && c.SentinelConfig != nil:
		return errors.New("cluster mode cannot be combined with sentinel configuration")
	case c.SentinelConfig != nil && c.SentinelConfig.MasterName == "":
		return errors.New("sentinel master name is required")
	case c.SentinelConfig != nil && len(c.SentinelConfig.SentinelAddrs) == 0:
		return errors.New("at least one sentinel address is required")
	}
	return nil
}

// BuildTLSConfig turns cfg into a crypto/tls configuration (TLS 1.2 or newer); nil means
// plaintext and returns nil.
func BuildTLSConfig(cfg *TLSConfig) (*tls.Config, error) {
	if cfg == nil {
		return nil, nil
	}
	out := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: cfg.InsecureSkipVerify, //nolint:gosec // the caller's explicit choice
	}
	if len(cfg.CACert) > 0 {
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(cfg.CACert) {
			return nil, errors.New("redis: no certificate found in the CA bundle")
		}
		out.RootCAs = roots
	}
	return out, nil
}

// NewClient builds the client cfg describes and PINGs it; a client that fails the PING is
// closed. cfg is not modified.
func NewClient(ctx context.Context, cfg *Config) (redis.UniversalClient, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("redis: invalid configuration: %w", err)
	}
	c := *cfg
	if c.DialTimeout == 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	nodeTLS, err := BuildTLSConfig(c.TLS)
	if err != nil {
		return nil, fmt.Errorf("redis: TLS configuration: %w", err)
	}
	var client redis.UniversalClient
	switch {
	case c.SentinelConfig != nil:
		sentinelTLS, err := BuildTLSConfig(c.SentinelTLS)
		if err != nil {
			return nil, fmt.Errorf("redis: sentinel TLS configuration: %w", err)
		}
		options := &redis.FailoverOptions{
			MasterName:    c.SentinelConfig.MasterName,
			SentinelAddrs: c.SentinelConfig.SentinelAddrs,
			Username:      c.Username,
			Password:      c.Password,
			DB:            c.DB,
			DialTimeout:   c.DialTimeout,
			ReadTimeout:   c.ReadTimeout,
			WriteTimeout:  c.WriteTimeout,
		}
		if nodeTLS != nil || sentinelTLS != nil {
			// One dialer serves both: Sentinel addresses get SentinelTLS, the rest (the master
			// and replicas Sentinel reports) get TLS.
			options.Dialer = dialer(nodeTLS, sentinelTLS, c.SentinelConfig.SentinelAddrs, c.DialTimeout)
		}
		client = redis.NewFailoverClient(options)
	case c.ClusterMode:
		client = redis.NewClusterClient(&redis.ClusterOptions{
			Addrs:        []string{c.Addr},
			Username:     c.Username,
			Password:     c.Password,
			DialTimeout:  c.DialTimeout,
			ReadTimeout:  c.ReadTimeout,
			WriteTimeout: c.WriteTimeout,
			TLSConfig:    nodeTLS,
		})
	default:
		client = redis.NewClient(&redis.Options{
			Addr:         c.Addr,
			Username:     c.Username,
			Password:     c.Password,
			DB:           c.DB,
			DialTimeout:  c.DialTimeout,
			ReadTimeout:  c.ReadTimeout,
			WriteTimeout: c.WriteTimeout,
			TLSConfig:    nodeTLS,
		})
	}
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("redis: failed to connect: %w", err)
	}
	return client, nil
}

func dialer(
	nodeTLS, sentinelTLS *tls.Config, sentinels []string, timeout time.Duration,
) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		config := nodeTLS
		if slices.Contains(sentinels, addr) {
			config = sentinelTLS
		}
		plain := &net.Dialer{Timeout: timeout}
		if config == nil {
			return plain.DialContext(ctx, network, addr)
		}
		return (&tls.Dialer{NetDialer: plain, Config: config}).DialContext(ctx, network, addr)
	}
}
