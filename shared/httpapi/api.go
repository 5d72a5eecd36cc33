package httpapi

import (
	"log/slog"
	"time"

	"github.com/ocyless/ocyless/shared/config"
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
}

// ConfigOptions are the handlers' options of a server configuration: body
// limit and next_job_delay. The caller adds the logger.
func ConfigOptions(s config.Server) Options {
	return Options{MaxBodySize: s.MaxBodySize, NextJobDelay: s.NextJobDelay}
}

// API serves Ocypod's HTTP endpoints on a Store.
type API struct {
	store Store
	opts  Options
	log   *slog.Logger
}

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
	return &API{store: store, opts: opts, log: log}
}
