package redisstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// replyError is an error reply from Redis, as go-redis reports it.
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

var _ redis.Error = replyError("")

func TestTranslate(t *testing.T) {
	t.Parallel()
	notFound := ocypod.JobNotFound(1)
	for _, tc := range []struct {
		name string
		err  error
		want ocypod.Kind
	}{
		{"closed client", redis.ErrClosed, ocypod.KindUnavailable},
		{"pool timeout", redis.ErrPoolTimeout, ocypod.KindUnavailable},
		{"wrapped pool timeout", fmt.Errorf("x: %w", redis.ErrPoolTimeout), ocypod.KindUnavailable},
		{"dial refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, ocypod.KindUnavailable},
		{"errno", syscall.ECONNRESET, ocypod.KindUnavailable},
		{"dns", &net.DNSError{Err: "no such host", Name: "redis"}, ocypod.KindUnavailable},
		{"eof", io.EOF, ocypod.KindUnavailable},
		{"deadline", context.DeadlineExceeded, ocypod.KindUnavailable},
		{"canceled", context.Canceled, ocypod.KindUnavailable},
		{"dial refused with an address", &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 6611}, Err: syscall.ECONNREFUSED}, ocypod.KindUnavailable},
		{"busy", replyError("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."), ocypod.KindUnavailable},
		{"oom", replyError("OOM command not allowed when used memory > 'maxmemory'."), ocypod.KindUnavailable},
		{"unknown reply starting like a known one", replyError("BUSYKEY Target key name already exists."), ocypod.KindInternal},
		{"loading", replyError("LOADING Redis is loading the dataset in memory"), ocypod.KindUnavailable},
		{"readonly", replyError("READONLY You can't write against a read only replica."), ocypod.KindUnavailable},
		{"clusterdown", replyError("CLUSTERDOWN The cluster is down"), ocypod.KindUnavailable},
		{"tryagain", replyError("TRYAGAIN Multiple keys request during rehashing of slot"), ocypod.KindUnavailable},
		{"masterdown", replyError("MASTERDOWN Link with MASTER is down"), ocypod.KindUnavailable},
		{"noauth", replyError("NOAUTH Authentication required."), ocypod.KindUnavailable},
		{"wrongpass", replyError("WRONGPASS invalid username-password pair or user is disabled."), ocypod.KindUnavailable},
		{"maxclients", replyError("ERR max number of clients reached"), ocypod.KindUnavailable},
		{"script error", replyError("ERR user_script:1: Script attempted to access nonexistent global variable 'x'"), ocypod.KindInternal},
		{"wrongtype", replyError("WRONGTYPE Operation against a key holding the wrong kind of value"), ocypod.KindInternal},
		{"crossslot", redis.ErrCrossSlot, ocypod.KindInternal},
		{"other", errors.New("boom"), ocypod.KindInternal},
		{"ocypod error", notFound, ocypod.KindNotFound},
	} {
		got := translate(tc.err)
		if k := ocypod.ErrorKind(got); k != tc.want {
			t.Errorf("translate(%s) kind = %d, want %d", tc.name, k, tc.want)
		}
		if !errors.Is(got, tc.err) {
			t.Errorf("translate(%s) = %v, which does not wrap the cause", tc.name, got)
		}
		if msg := ocypod.ErrorMessage(got); tc.want == ocypod.KindUnavailable &&
			(!strings.HasPrefix(msg, "Failed to connect to Redis: ") || strings.Contains(msg, tc.err.Error())) {
			t.Errorf("translate(%s) tells the client %q", tc.name, msg)
		}
	}
	if translate(nil) != nil {
		t.Errorf("translate(nil) != nil")
	}
}
