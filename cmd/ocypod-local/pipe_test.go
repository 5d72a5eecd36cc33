package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/config"
)

// TestEmbeddedRedisLargePipeline: a pipeline far larger than the client's
// write buffer (a batch route's) goes through the embedded miniredis's
// in-memory pipe without blocking.
func TestEmbeddedRedisLargePipeline(t *testing.T) {
	t.Parallel()
	rdb, closeRedis := embeddedRedis(config.Default().Redis)
	defer closeRedis()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	pipe := rdb.Pipeline()
	value := strings.Repeat("x", 100)
	for i := range 2000 {
		pipe.Set(ctx, "k"+strconv.Itoa(i), value, 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatalf("a pipeline of 2000 SETs: %v", err)
	}
	if n, err := rdb.DBSize(ctx).Result(); err != nil || n != 2000 {
		t.Fatalf("DBSIZE = %d, %v, want 2000", n, err)
	}
}
