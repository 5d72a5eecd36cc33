package redisstore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// The client's text of a 503 is "Failed to connect to Redis: " and one of
// these phrases. The cause (an address, a server's error text) goes to the
// log only, through the *ocypod.Error's Err.
const (
	reasonTimeout     = "timed out"
	reasonConnection  = "connection failed"
	reasonBusy        = "server busy"
	reasonLoading     = "server loading"
	reasonMemory      = "out of memory"
	reasonAuth        = "authentication failed"
	reasonReadOnly    = "read-only replica"
	reasonReplication = "replication unavailable"
	reasonCluster     = "cluster unavailable"
)

// errorClass is one row of unavailableErrors.
type errorClass struct {
	name   string // names the row in tests
	reason string // the 503's phrase
	// reply matches the text of a Redis error reply; err matches any other
	// failure. A row has one of them.
	reply func(text string) bool
	err   func(error) bool
}

// unavailableErrors is the one table deciding which Redis failures answer
// 503: the first row matching an error gives its phrase; an error no row
// matches is a 500. A Redis error reply is matched by the reply rows only,
// so an unknown reply (a script error, WRONGTYPE, CROSSSLOT) is a 500.
// Each row has a test in errors_*_test.go.
var unavailableErrors = []errorClass{
	// The server is up but cannot serve now: a script past
	// busy-reply-threshold, no free client slot, loading its data,
	// maxmemory reached with noeviction, a replica (or a failover), a
	// replica without its primary, too few replicas to write, a cluster
	// missing slots or resharding.
	{name: "BUSY", reason: reasonBusy, reply: prefix("BUSY ")},
	{name: "maxclients", reason: reasonBusy, reply: prefix("ERR max number of clients reached")},
	{name: "LOADING", reason: reasonLoading, reply: prefix("LOADING ")},
	{name: "OOM", reason: reasonMemory, reply: prefix("OOM ")},
	{name: "READONLY", reason: reasonReadOnly, reply: prefix("READONLY ")},
	{name: "MASTERDOWN", reason: reasonReplication, reply: prefix("MASTERDOWN ")},
	{name: "NOREPLICAS", reason: reasonReplication, reply: prefix("NOREPLICAS ")},
	{name: "CLUSTERDOWN", reason: reasonCluster, reply: prefix("CLUSTERDOWN ")},
	{name: "TRYAGAIN", reason: reasonCluster, reply: prefix("TRYAGAIN ")},
	// A wrong or expired password or IAM token.
	{name: "NOAUTH", reason: reasonAuth, reply: prefix("NOAUTH ")},
	{name: "WRONGPASS", reason: reasonAuth, reply: prefix("WRONGPASS ")},
	{name: "unauthenticated", reason: reasonAuth, reply: unauthenticated},
	// The client gave up waiting: a dial, read or write timeout (first: a
	// dial timeout matches the context rows too), the caller's or the
	// operation's deadline, the wait for a pooled connection.
	{name: "network timeout", reason: reasonTimeout, err: netTimeout},
	{name: "context deadline", reason: reasonTimeout, err: is(context.DeadlineExceeded)},
	{name: "context canceled", reason: reasonTimeout, err: is(context.Canceled)},
	{name: "pool timeout", reason: reasonTimeout, err: is(redis.ErrPoolTimeout)},
	// No usable connection: the pool at MaxActiveConns, a closed client, a
	// connection closed by the server, a failed TLS handshake, a refused,
	// reset or unreachable address, a name that does not resolve.
	{name: "pool exhausted", reason: reasonConnection, err: is(redis.ErrPoolExhausted)},
	{name: "closed client", reason: reasonConnection, err: is(redis.ErrClosed)},
	{name: "EOF", reason: reasonConnection, err: eof},
	{name: "TLS", reason: reasonConnection, err: tlsFailure},
	{name: "network", reason: reasonConnection, err: network},
}

// translate turns an error of the Redis client into an *ocypod.Error:
// ocypod.Unavailable (503) when a row of unavailableErrors matches,
// ocypod.Internal (500) otherwise. Errors that already are *ocypod.Error
// pass through.
func translate(err error) error {
	if err == nil {
		return nil
	}
	var oe *ocypod.Error
	if errors.As(err, &oe) {
		return err
	}
	var sent *sentError
	if errors.As(err, &sent) {
		err = sent.cause
	}
	if c := classify(err); c != nil {
		return ocypod.UnavailableBecause(c.reason, err)
	}
	return ocypod.Internal(err)
}

// classify returns the row of unavailableErrors that err matches, or nil.
func classify(err error) *errorClass {
	var reply redis.Error
	isReply := errors.As(err, &reply)
	for i := range unavailableErrors {
		c := &unavailableErrors[i]
		if isReply && c.reply != nil && c.reply(reply.Error()) || !isReply && c.err != nil && c.err(err) {
			return c
		}
	}
	return nil
}

func prefix(p string) func(string) bool {
	return func(text string) bool { return strings.HasPrefix(text, p) }
}

func is(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

// unauthenticated matches the ERR replies that refuse a connection's
// password or IAM token without an ACL error code: ElastiCache's "ERR
// unauthenticated ...", Redis's "ERR Protocol error: unauthenticated
// multibulk length" (a long command before AUTH) and the pre-ACL "ERR
// invalid password".
func unauthenticated(text string) bool {
	t := strings.ToLower(text)
	return strings.HasPrefix(t, "err ") && (strings.Contains(t, "unauthenticated") || strings.Contains(t, "invalid password"))
}

// netTimeout matches a socket deadline ("i/o timeout") and a dial that
// timed out, but not the context errors, which have rows of their own.
func netTimeout(err error) bool {
	var oe *net.OpError
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &oe) && oe.Timeout()
}

func eof(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// tlsFailure matches a failed TLS handshake: a server that does not speak
// TLS, a certificate that does not verify, or an alert from the server.
func tlsFailure(err error) bool {
	var (
		recErr    tls.RecordHeaderError
		verifyErr *tls.CertificateVerificationError
		unknownCA x509.UnknownAuthorityError
		hostErr   x509.HostnameError
		invalid   x509.CertificateInvalidError
		alert     tls.AlertError
	)
	return errors.As(err, &recErr) || errors.As(err, &verifyErr) || errors.As(err, &unknownCA) ||
		errors.As(err, &hostErr) || errors.As(err, &invalid) || errors.As(err, &alert)
}

// network matches the other failures of a connection: refused, reset,
// broken pipe, unreachable, a name that does not resolve.
func network(err error) bool {
	var (
		ne    net.Error
		errno syscall.Errno
	)
	return errors.As(err, &ne) || errors.As(err, &errno)
}
