package httpapi

import (
	"log/slog"
	"sync"
	"time"

	"github.com/ocyless/ocyless/shared/config"
	"github.com/ocyless/ocyless/shared/push"
)

// DefaultMaxBodySize is the request body limit when none is configured:
// the configuration's default (upstream Ocypod's 1024 bytes was too small
// for real outputs).
const DefaultMaxBodySize = config.DefaultMaxBodySize

// Version is reported by /info/version: the Ocypod API version we implement.
const Version = "0.8.0"

// Options configure the handlers.
type Options struct {
	MaxBodySize  int64         // request body limit in bytes; <= 0 means DefaultMaxBodySize
	NextJobDelay time.Duration // sleep before answering 204 on an empty queue
	Logger       *slog.Logger  // nil discards logs
	// Now is the clock of the times a request gives relative to now (a
	// retry's delay, today's statistics); nil means time.Now. The store
	// keeps its own clock for everything else.
	Now func() time.Time
	// StrictInput refuses unknown body keys and query parameters in pure
	// Ocypod requests too ([server] strict_input); requests that use the
	// extensions always get them refused.
	StrictInput bool
	// PushPolicy judges push and callback targets when they are set
	// ([push] allowed_hosts); nil: the local server's default, loopback
	// only.
	PushPolicy *push.Policy
}

// ConfigOptions are the handlers' options of a server configuration: body
// limit, next_job_delay and strict_input. The caller adds the logger.
func ConfigOptions(s config.Server) Options {
	return Options{MaxBodySize: s.MaxBodySize, NextJobDelay: s.NextJobDelay, StrictInput: s.StrictInput}
}

// API serves Ocypod's HTTP endpoints on a Store.
type API struct {
	store Store
	opts  Options
	log   *slog.Logger
	// drain closes when the server starts shutting down (Drain): waits
	// end at once.
	drain     chan struct{}
	drainOnce sync.Once
	// pushPolicy is Options.PushPolicy or its default.
	pushPolicy *push.Policy
}

// Drain ends every wait in progress and to come (long-poll takes answer
// what they have, usually 204; next_job_delay is cut short): the server
// is shutting down and should not hold requests open. It is safe to call
// more than once.
func (a *API) Drain() { a.drainOnce.Do(func() { close(a.drain) }) }

// New returns the API over store.
func New(store Store, opts Options) *API {
	if opts.MaxBodySize <= 0 {
		opts.MaxBodySize = DefaultMaxBodySize
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pol := opts.PushPolicy
	if pol == nil {
		pol, _ = push.NewPolicy(nil, push.Local) // no entries: cannot fail
	}
	return &API{store: store, opts: opts, log: log, drain: make(chan struct{}), pushPolicy: pol}
}
