package redisstore

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

type nopLimiter struct{}

func (nopLimiter) Allow() error       { return nil }
func (nopLimiter) ReportResult(error) {}

// TestFromParsed: a parsed setting UniversalOptions cannot carry is an
// error, not silently lost; an address and a unix network carry over.
func TestFromParsed(t *testing.T) {
	var u redis.UniversalOptions
	if err := fromParsed(&u, &redis.Options{Addr: "h:1", Limiter: nopLimiter{}}); err == nil || !strings.Contains(err.Error(), "Limiter") {
		t.Fatalf("fromParsed with a Limiter = %v, want an error naming it", err)
	}
	u = redis.UniversalOptions{}
	if err := fromParsed(&u, &redis.Options{Network: "unix", Addr: "/tmp/r.sock", DB: 2}); err != nil || len(u.Addrs) != 1 || u.Addrs[0] != "/tmp/r.sock" || u.DB != 2 {
		t.Fatalf("fromParsed = %+v, %v", u, err)
	}
}
