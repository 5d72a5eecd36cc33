package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// ClientOptions configure the connection to Redis.
type ClientOptions struct {
	// URL is redis://[user:pass@]host[:port][/db], rediss:// for TLS, or
	// unix:///path/to/socket.
	URL string
	// ClusterMode selects a cluster client for a cluster configuration
	// endpoint (ElastiCache cluster mode, ElastiCache Serverless).
	ClusterMode bool
	// PoolSize is the most connections kept; 0 means go-redis's default.
	PoolSize int
	// DialTimeout, ReadTimeout and WriteTimeout bound each Redis call, so an
	// unreachable Redis turns into a 503 quickly. 0 means 2s.
	DialTimeout, ReadTimeout, WriteTimeout time.Duration
	// Credentials, when set, supplies the user name and password for every
	// new connection (e.g. a freshly signed ElastiCache IAM token).
	Credentials func(ctx context.Context) (username, password string, err error)
}

// NewClient returns a Redis client for o. It does not dial: the first command
// does, so building it at Lambda init costs nothing.
func NewClient(o ClientOptions) (redis.UniversalClient, error) {
	return nil, errors.New("TODO")
}
