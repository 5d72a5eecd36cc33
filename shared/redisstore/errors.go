package redisstore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// unavailablePrefixes are Redis error replies that mean "Redis cannot serve
// us right now" rather than "the request is wrong": loading, failover,
// cluster reconfiguration, a read-only replica, no free client slot, and
// authentication failures while connecting.
var unavailablePrefixes = []string{
	"LOADING", "CLUSTERDOWN", "TRYAGAIN", "MASTERDOWN", "READONLY",
	"NOREPLICAS", "NOAUTH", "WRONGPASS", "ERR max number of clients",
}

// translate turns an error of the Redis client into an *ocypod.Error:
// ocypod.Unavailable for connection problems (503), ocypod.Internal for
// everything else (500). Errors that already are *ocypod.Error pass through.
func translate(err error) error {
	if err == nil {
		return nil
	}
	var oe *ocypod.Error
	if errors.As(err, &oe) {
		return err
	}
	if unavailable(err) {
		return ocypod.Unavailable(err)
	}
	return ocypod.Internal(err)
}

// unavailable reports whether err means Redis could not be reached or
// cannot serve requests at the moment.
func unavailable(err error) bool {
	var rerr redis.Error
	if errors.As(err, &rerr) {
		msg := rerr.Error()
		for _, p := range unavailablePrefixes {
			if strings.HasPrefix(msg, p) {
				return true
			}
		}
		return false
	}
	var (
		netErr    net.Error
		recErr    tls.RecordHeaderError
		verifyErr *tls.CertificateVerificationError
		unknownCA x509.UnknownAuthorityError
		hostErr   x509.HostnameError
		errno     syscall.Errno
	)
	switch {
	case errors.Is(err, redis.ErrClosed),
		errors.Is(err, redis.ErrPoolTimeout),
		errors.Is(err, redis.ErrPoolExhausted),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, context.Canceled),
		errors.As(err, &netErr),
		errors.As(err, &recErr),
		errors.As(err, &verifyErr),
		errors.As(err, &unknownCA),
		errors.As(err, &hostErr),
		errors.As(err, &errno):
		return true
	}
	return false
}
