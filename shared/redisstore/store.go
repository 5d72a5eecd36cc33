package redisstore

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Options configure a Store.
type Options struct {
	// Namespace is Ocypod's key_namespace; it becomes the hash tag of every
	// key ("{<ns>}:job:1"). Empty means "ocypod". Valid characters:
	// [A-Za-z0-9_.-], at most 64 bytes.
	Namespace string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// SweepBatch is the most jobs one sweep call handles; <= 0 means 100.
	SweepBatch int
	// InlineSweep is the most overdue timeouts and due retries that taking a
	// job also handles, so workers polling a queue see them promptly even
	// between scheduled sweeps. 0 means 8; negative disables.
	InlineSweep int
	// Logger receives one line per job that an inline sweep changed; nil
	// discards them. (Scheduled sweeps report theirs in SweepResult.)
	Logger *slog.Logger
	// Admit, when set, is asked before every operation that stores new
	// data (creating a job, writing an output); a non-nil error (such as
	// ocypod.StorageFull) refuses the operation before Redis is touched.
	// The local server bounds its embedded Redis's memory with it.
	Admit func(ctx context.Context) error
	// OpTimeout bounds each operation's Redis calls together, so that it
	// fails (503) within this time even when it first waits for a pooled
	// connection. 0 means the client's read timeout (NewClient's timeout);
	// negative means none beyond the caller's context.
	OpTimeout time.Duration
}

// Defaults of Options.
const (
	defaultSweepBatch  = 100
	defaultInlineSweep = 8
)

// Store is the Ocypod job store on Redis. Every operation is one Lua script
// (or one read command): exactly one round trip, atomic.
//
// Every method returns nil or an error wrapping an *ocypod.Error (use
// errors.As or ocypod.ErrorKind): the documented refusals (a missing job or
// queue, an invalid queue name, a conflict), ocypod.Unavailable when Redis
// cannot be reached or cannot serve (connection, timeout, LOADING, READONLY,
// CLUSTERDOWN...), and ocypod.Internal for anything else (unexpected replies,
// corrupt data). A refused operation writes nothing. A call that fails with
// Unavailable after its script was sent may or may not have been applied.
type Store struct {
	rdb         redis.UniversalClient
	keys        keys
	now         func() time.Time
	sweepBatch  int
	inlineSweep int
	log         *slog.Logger
	admit       func(ctx context.Context) error
	opTimeout   time.Duration
}

// New returns a Store on rdb. It fails if the namespace is invalid (see
// ValidNamespace); it does not contact Redis.
func New(rdb redis.UniversalClient, opts Options) (*Store, error) {
	if rdb == nil {
		return nil, fmt.Errorf("redisstore: nil Redis client")
	}
	if !ValidNamespace(opts.Namespace) {
		return nil, fmt.Errorf("redisstore: invalid namespace %q: want 1 to 64 of [A-Za-z0-9_.-]", opts.Namespace)
	}
	s := &Store{
		rdb:         rdb,
		keys:        newKeys(opts.Namespace),
		now:         opts.Now,
		sweepBatch:  opts.SweepBatch,
		inlineSweep: opts.InlineSweep,
		log:         opts.Logger,
		admit:       opts.Admit,
		opTimeout:   opts.OpTimeout,
	}
	if s.opTimeout == 0 {
		s.opTimeout = clientTimeout(rdb)
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.sweepBatch <= 0 {
		s.sweepBatch = defaultSweepBatch
	}
	switch {
	case s.inlineSweep == 0:
		s.inlineSweep = defaultInlineSweep
	case s.inlineSweep < 0:
		s.inlineSweep = 0
	}
	return s, nil
}

// Ping checks that Redis answers (GET /health). It returns
// ocypod.Unavailable when Redis cannot be reached, ocypod.Internal when it
// answers anything but PONG or an error.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := s.deadline(ctx)
	defer cancel()
	res, err := s.rdb.Ping(ctx).Result()
	if err != nil {
		return fmt.Errorf("redisstore: ping: %w", translate(err))
	}
	if res != "PONG" {
		return fmt.Errorf("redisstore: ping: %w", ocypod.Internal(fmt.Errorf("unexpected PING response from Redis: %s", res)))
	}
	return nil
}

// admitWrite asks Options.Admit, if any, whether new data may be stored.
func (s *Store) admitWrite(ctx context.Context) error {
	if s.admit == nil {
		return nil
	}
	return s.admit(ctx)
}

// deadline bounds an operation's Redis calls by Options.OpTimeout.
func (s *Store) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.opTimeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.opTimeout)
}

// nowMicros is the clock as the decimal microseconds the scripts take.
func (s *Store) nowMicros() string {
	return strconv.FormatInt(s.now().UnixMicro(), 10)
}

// run runs a script with the key prefix as ARGV[1] and returns its reply,
// which every script makes an array.
func (s *Store) run(ctx context.Context, sc *script, key string, args ...any) ([]any, error) {
	argv := make([]any, 0, len(args)+1)
	argv = append(argv, s.keys.Prefix())
	argv = append(argv, args...)
	ctx, cancel := s.deadline(ctx)
	defer cancel()
	res, err := sc.get().Run(ctx, s.rdb, []string{key}, argv...).Result()
	if err != nil {
		return nil, translate(err)
	}
	arr, ok := res.([]any)
	if !ok || len(arr) == 0 {
		return nil, ocypod.Internal(fmt.Errorf("unexpected script reply %T %v", res, res))
	}
	return arr, nil
}

// replyCode is the result code of a write script's reply.
func replyCode(arr []any) (int64, error) {
	c, ok := arr[0].(int64)
	if !ok {
		return 0, ocypod.Internal(fmt.Errorf("unexpected script reply %v", arr))
	}
	return c, nil
}

// replyString is element i of a reply as a string ("" when absent).
func replyString(arr []any, i int) string {
	if i >= len(arr) {
		return ""
	}
	switch v := arr[i].(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return ""
}

// replyInt is element i of a reply as an integer.
func replyInt(arr []any, i int) (int64, error) {
	if i < len(arr) {
		switch v := arr[i].(type) {
		case int64:
			return v, nil
		case string:
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return n, nil
			}
		}
	}
	return 0, ocypod.Internal(fmt.Errorf("unexpected script reply %v: want an integer at %d", arr, i))
}

// replyIDs is element i of a reply, an array of job ids.
func replyIDs(arr []any, i int) ([]uint64, error) {
	if i >= len(arr) {
		return nil, ocypod.Internal(fmt.Errorf("unexpected script reply %v: want ids at %d", arr, i))
	}
	list, ok := arr[i].([]any)
	if !ok {
		return nil, ocypod.Internal(fmt.Errorf("unexpected script reply %v: want ids at %d", arr, i))
	}
	ids := make([]uint64, 0, len(list))
	for _, v := range list {
		s, _ := v.(string)
		id, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, ocypod.Internal(fmt.Errorf("invalid job id %q in an index", s))
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// parseIDs converts the members of an index to job ids.
func parseIDs(members []string) ([]uint64, error) {
	ids := make([]uint64, 0, len(members))
	for _, m := range members {
		id, err := strconv.ParseUint(m, 10, 64)
		if err != nil {
			return nil, ocypod.Internal(fmt.Errorf("invalid job id %q in an index", m))
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// corrupt is the error for a script reply with codeCorrupt.
func corrupt(arr []any) error {
	return ocypod.Internal(fmt.Errorf("corrupt data: %s", replyString(arr, 1)))
}

// unexpectedCode is the error for a result code a script should not return.
func unexpectedCode(c int64) error {
	return ocypod.Internal(fmt.Errorf("unexpected script result code %d", c))
}
