// Package config reads the server's configuration: Ocypod's TOML file format
// (with ${VAR} and ${VAR=default} interpolation) for the local server, and
// OCYPOD_* environment variables, which override the file and are the only
// source on Lambda.
package config

import (
	"errors"
	"log/slog"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Config is the whole configuration, validated.
type Config struct {
	Server Server
	Redis  Redis
	// Queues are created (or their settings reset) at start, like Ocypod's
	// [queue.<name>] sections.
	Queues map[string]ocypod.QueueSettings
}

// Server configures HTTP and the sweeps.
type Server struct {
	Host                 string        // default 127.0.0.1
	Port                 uint16        // default 8023
	MaxBodySize          int64         // bytes; default 256 KiB
	TimeoutCheckInterval time.Duration // default 30s
	RetryCheckInterval   time.Duration // default 60s
	ExpiryCheckInterval  time.Duration // default 5m
	ShutdownTimeout      time.Duration // default 30s
	NextJobDelay         time.Duration // default 0
	LogLevel             slog.Level    // default info
}

// Redis configures the store's connection.
type Redis struct {
	URL          string // empty: the local server embeds miniredis
	KeyNamespace string // hash tag of every key; empty means "ocypod"
	ClusterMode  bool
	PoolSize     int
	Timeout      time.Duration // dial/read/write timeout; default 2s
	// IAMUser enables ElastiCache IAM auth as this user (user id = name).
	IAMUser string
	// CacheName is the replication group id or serverless cache name the IAM
	// token is signed for.
	CacheName  string
	Serverless bool // the cache is ElastiCache Serverless
}

// Default returns the built-in defaults.
func Default() Config { return Config{} }

// Load reads the TOML file at path (none if path is empty), then applies
// OCYPOD_* variables from getenv, then validates.
func Load(path string, getenv func(string) (string, bool)) (Config, error) {
	return Config{}, errors.New("TODO")
}

// FromEnv is Load without a file: the Lambda configuration.
func FromEnv(getenv func(string) (string, bool)) (Config, error) { return Load("", getenv) }
