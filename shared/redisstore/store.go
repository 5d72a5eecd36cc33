package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/config"
	"github.com/ocyless/ocyless/shared/ocypod"
)

// DefaultNamespace is the hash tag used when Options.Namespace is empty.
const DefaultNamespace = "ocypod"

var namespaceRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// ValidNamespace reports whether ns can be used as Options.Namespace: empty
// (meaning DefaultNamespace) or 1 to 64 of [A-Za-z0-9_.-]. Those characters
// can never close the "{...}" hash tag.
func ValidNamespace(ns string) bool {
	return ns == "" || namespaceRE.MatchString(ns)
}

// Options configure a Store.
type Options struct {
	// Namespace is Ocypod's key_namespace; it names the hash tags of every
	// key ("{<ns>}:j" with one partition). Empty means "ocypod". Valid
	// characters: [A-Za-z0-9_.-], at most 64 bytes.
	Namespace string
	// Partitions is how many partitions (hash tags, so cluster slots) the
	// namespace's data is spread over: 1 to MaxPartitions; 0 means 1. It
	// cannot change once the namespace holds data (Open refuses).
	Partitions int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Rand returns a uniform number in [0, 1) for retry jitter; nil means
	// math/rand/v2.
	Rand func() float64
	// SweepBatch is the most jobs one sweep call handles per partition;
	// <= 0 means 100.
	SweepBatch int
	// InlineSweep is the most overdue timeouts that taking a job also
	// handles, so workers polling a queue see them promptly even between
	// scheduled sweeps. 0 means 8; negative disables.
	InlineSweep int
	// StatsDays is how many days of per-queue statistics are kept; 0 means
	// 30.
	StatsDays int
	// WorkerExpiry is how long a worker is listed after it last took a job;
	// 0 means an hour.
	WorkerExpiry time.Duration
	// MaxAnswerBytes bounds a listing page and a take with count (see
	// ocypod.MaxAnswerBytes, the default when 0; tests set less).
	MaxAnswerBytes int
	// Logger receives one line per job that an inline sweep changed; nil
	// discards them.
	Logger *slog.Logger
	// Scripts selects how scripts run: "functions" loads them once as a
	// Redis Functions library and calls them with FCALL (Redis 7+,
	// Valkey), "eval" sends each with EVALSHA, and "" (auto) tries
	// functions and falls back to EVALSHA where the server has no FUNCTION
	// (miniredis) or refuses it.
	Scripts string
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
	// MaxLongPolls is the most takes that wait at once in this process
	// (TakeRequest.Wait); past it a take answers at once. 0 means
	// config.DefaultMaxLongPolls.
	MaxLongPolls int
	// AutoPipeline is how many pipelined round trips the script calls of
	// concurrent operations may have in flight at once: calls that arrive
	// while they are all busy are sent together in the next (autopipe.go).
	// 0 means 2; negative turns it off, so that each call is a round trip
	// of its own on a pooled connection (a Lambda function serving one
	// request at a time gains nothing from it).
	AutoPipeline int
}

// Defaults of Options.
const (
	defaultSweepBatch   = 100
	defaultInlineSweep  = 8
	defaultStatsDays    = 30
	defaultWorkerExpiry = time.Hour
	// dropBatch is the most pending jobs of a deleted queue one call drops.
	dropBatch = 200
	// outboxGrace is how old an outbox entry must be before the outbox sweep
	// applies it: the request that wrote it applies it itself right after.
	outboxGrace = 10 * time.Second
	// appliedKeep is how long a partition remembers an applied effect.
	appliedKeep = 24 * time.Hour
)

// Store is the job store on Redis. Every operation on one partition is one
// Lua script (or one read command): one round trip, atomic. Reads that span
// partitions send one call per partition in one pipelined round.
//
// Every method returns nil or an error wrapping an *ocypod.Error (use
// errors.As or ocypod.ErrorKind): the documented refusals (a missing job or
// queue, an invalid value, a conflict), ocypod.Unavailable when Redis cannot
// be reached or cannot serve, and ocypod.Internal for anything else. A
// refused operation writes nothing. A call that fails with Unavailable after
// its script was sent may or may not have been applied.
type Store struct {
	rdb  redis.UniversalClient
	l    *layout
	o    Options
	log  *slog.Logger
	now  func() time.Time
	rand func() float64
	// mode is how scripts run (modeAuto until the first call tells).
	mode atomic.Int32
	// crashAfterCall makes afterCall stop before applying effects, as a
	// process dying right after a script would (tests only).
	crashAfterCall bool
	// lostAck makes applying an effect stop after the application, before
	// the effect leaves its outbox, as a process dying then, or a call
	// Redis ran but whose reply was lost, would (tests only).
	lostAck bool
	// policy caches the eviction policy check of Ping.
	policy policyCheck
	// shardCache holds what this process knows of sharded queues
	// (queue name -> shardInfo).
	shardCache sync.Map
	// rebalanced is when this process last moved a queue's limit shares
	// because a take asked (queue name -> time.Time, store clock).
	rebalanced sync.Map
	// keysHome holds the queues whose keys are all at their home
	// partition (keys.go).
	keysHome sync.Map
	// upgradeBatch, when set, replaces the upgrade's batch size (tests).
	upgradeBatch int
	// upgradeLease, when set, replaces the upgrade lock's lease (tests).
	upgradeLease time.Duration
	// servable is set once Open or Upgrade found this version's layout.
	servable atomic.Bool
	// folded is the minute (since the epoch, store clock) before which a
	// sweep last folded every pending statistic (stats.go's foldDue).
	folded atomic.Int64
	// upgradeHooks are the upgrade's test hooks.
	upgradeHooks upgradeHooks
	// hub holds the long-polling takes (waiters.go).
	hub *hub
	// watchers are called after a queue's settings change (push.go).
	watchers queueWatchers
	// pushDue are called after a create made a push queue's job due.
	pushDue queueWatchers
	// cursorSecret caches the key that signs listing cursors.
	cursorSecret cursorSecret
	// pipe sends script calls with automatic pipelining; nil when
	// Options.AutoPipeline is negative.
	pipe *autoPipe
}

// New returns a Store on rdb. It fails if the namespace or the partition
// count is invalid; it does not contact Redis (see Open).
func New(rdb redis.UniversalClient, opts Options) (*Store, error) {
	if rdb == nil {
		return nil, errors.New("redisstore: nil Redis client")
	}
	if !ValidNamespace(opts.Namespace) {
		return nil, fmt.Errorf("redisstore: invalid namespace %q: want 1 to 64 of [A-Za-z0-9_.-]", opts.Namespace)
	}
	if opts.Partitions < 0 || opts.Partitions > MaxPartitions {
		return nil, fmt.Errorf("redisstore: invalid partitions %d: want 1 to %d", opts.Partitions, MaxPartitions)
	}
	ns := opts.Namespace
	if ns == "" {
		ns = DefaultNamespace
	}
	s := &Store{rdb: rdb, o: opts, l: layoutFor(ns, max(opts.Partitions, 1)), log: opts.Logger, now: opts.Now, rand: opts.Rand}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.rand == nil {
		s.rand = rand.Float64
	}
	switch opts.Scripts {
	case "", "auto":
	case "functions":
		s.mode.Store(modeFunctions)
	case "eval":
		s.mode.Store(modeEval)
	default:
		return nil, fmt.Errorf("redisstore: invalid script mode %q: want auto, functions or eval", opts.Scripts)
	}
	if s.o.OpTimeout == 0 {
		s.o.OpTimeout = clientTimeout(rdb)
	}
	if s.o.SweepBatch <= 0 {
		s.o.SweepBatch = defaultSweepBatch
	}
	switch {
	case s.o.InlineSweep == 0:
		s.o.InlineSweep = defaultInlineSweep
	case s.o.InlineSweep < 0:
		s.o.InlineSweep = 0
	}
	if s.o.StatsDays <= 0 {
		s.o.StatsDays = defaultStatsDays
	}
	if s.o.WorkerExpiry <= 0 {
		s.o.WorkerExpiry = defaultWorkerExpiry
	}
	if s.o.MaxLongPolls <= 0 {
		s.o.MaxLongPolls = config.DefaultMaxLongPolls
	}
	s.hub = newHub(s, s.o.MaxLongPolls)
	switch {
	case s.o.AutoPipeline == 0:
		s.pipe = newAutoPipe(rdb, defaultAutoPipeline)
	case s.o.AutoPipeline > 0:
		s.pipe = newAutoPipe(rdb, s.o.AutoPipeline)
	}
	if s.o.MaxAnswerBytes <= 0 {
		s.o.MaxAnswerBytes = ocypod.MaxAnswerBytes
	}
	return s, nil
}

// Partitions is the number of partitions.
func (s *Store) Partitions() int { return s.l.P }

// Ping checks that Redis answers (GET /health): every node holding a
// partition, and that none evicts keys (maxmemory-policy allkeys-*, read
// at most once a minute). It returns ocypod.Unavailable when Redis cannot
// be reached, ocypod.Internal when it answers anything but PONG or an
// error, or evicts.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.ping(ctx); err != nil {
		return err
	}
	if err := s.checkPolicy(ctx); err != nil {
		return fmt.Errorf("redisstore: ping: %w", err)
	}
	return nil
}

func (s *Store) ping(ctx context.Context) error {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	if cc, ok := s.rdb.(*redis.ClusterClient); ok {
		err := cc.ForEachShard(ctx, func(ctx context.Context, c *redis.Client) error { return c.Ping(ctx).Err() })
		if err != nil {
			return fmt.Errorf("redisstore: ping: %w", translate(err))
		}
		return nil
	}
	res, err := s.rdb.Ping(ctx).Result()
	if err != nil {
		return fmt.Errorf("redisstore: ping: %w", translate(err))
	}
	if res != "PONG" {
		return fmt.Errorf("redisstore: ping: %w", ocypod.Internal(fmt.Errorf("unexpected PING response from Redis: %s", res)))
	}
	return nil
}

// opContext bounds one operation by Options.OpTimeout.
func (s *Store) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.o.OpTimeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.o.OpTimeout)
}

// opDeadline is when an operation starting now gives up: Options.OpTimeout
// from now (zero for none). A script call carries it as a time rather than
// a context of its own (opContext): deriving a context costs a timer and
// the parent's bookkeeping on every call, and the autopipe needs neither
// (autoPipe.do).
func (s *Store) opDeadline() time.Time {
	if s.o.OpTimeout <= 0 {
		return time.Time{}
	}
	return time.Now().Add(s.o.OpTimeout)
}

// withDeadline is ctx ending at deadline too (unless it is zero, or ctx
// ends first).
func withDeadline(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); deadline.IsZero() || ok && !d.After(deadline) {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, deadline)
}

// admitWrite asks Options.Admit, if any, whether new data may be stored.
func (s *Store) admitWrite(ctx context.Context) error {
	if s.o.Admit == nil {
		return nil
	}
	return s.o.Admit(ctx)
}

// call is one script call on one partition.
type call struct {
	sc    *script
	p     int
	queue string // names the keyWake key
	// extra are the KW keys (whole key names).
	extra []string
	// args is the call's own argument: nil, or a pointer to a struct of
	// a type its script declares (see args.go).
	args any
	now  time.Time
}

// reply is what every script answers: its own fields, plus the queues its
// changes made ready (woken), the effects it recorded for other partitions,
// and an error code.
type reply struct {
	raw     []byte
	p       int               // the partition the call ran on
	Err     string            `json:"err"`
	Woken   list[string]      `json:"woken"`
	Effects list[effectEntry] `json:"effects"`
}

// keysOf builds the KEYS of c for its script.
func (s *Store) keysOf(b *built, c *call) []string {
	keys := make([]string, 0, len(b.keys)+len(c.extra))
	for _, name := range b.keys {
		keys = append(keys, s.partKey(c.p, name, c.queue, c.now))
	}
	if b.variadic {
		keys = append(keys, c.extra...)
	}
	return keys
}

// partKey is the key called name of partition p; keyStats is the
// statistics of the day of now, keyMinutes the per-minute counts of its
// hour, keyWake the wake list of queue.
func (s *Store) partKey(p int, name, queue string, now time.Time) string {
	switch name {
	case keyStats:
		return s.l.key(p, keyStats+":"+now.UTC().Format(time.DateOnly))
	case keyMinutes:
		return s.l.key(p, keyMinutes+":"+minuteHour(now))
	case keyWake:
		return s.l.key(p, keyWake+":"+queue)
	}
	return s.l.key(p, name)
}

// argv is the JSON argument of c: the fields every script gets (now, ms,
// p, P, rand, stats_ttl; queue when c names one) and then c.args's own.
func (s *Store) argv(c *call) (string, error) {
	if !c.sc.takes(c.args) {
		return "", fmt.Errorf("%s does not take an argument of type %T", c.sc.name, c.args)
	}
	// The fields every call carries, and the hot calls' own, are written
	// by hand (this is on every request's path), in a pooled buffer.
	buf := argvBuffers.Get().(*[]byte)
	defer func() {
		if cap(*buf) <= maxPooledArgv {
			argvBuffers.Put(buf)
		}
	}()
	b := append((*buf)[:0], `{"now":"`...)
	b = strconv.AppendInt(b, c.now.UnixMicro(), 10)
	b = append(b, `","ms":`...)
	b = strconv.AppendInt(b, c.now.UnixMilli(), 10)
	b = append(b, `,"p":`...)
	b = strconv.AppendInt(b, int64(c.p), 10)
	b = append(b, `,"P":`...)
	b = strconv.AppendInt(b, int64(s.l.P), 10)
	b = append(b, `,"rand":`...)
	b = strconv.AppendFloat(b, s.rand(), 'g', -1, 64)
	b = append(b, `,"stats_ttl":`...)
	b = strconv.AppendInt(b, int64(s.o.StatsDays+1)*86400, 10)
	if c.queue != "" {
		b = appendStringField(b, "queue", c.queue)
	}
	switch a := c.args.(type) {
	case nil:
	case argAppender:
		b = a.appendArgs(b)
	default:
		rest, err := json.Marshal(a)
		if err != nil {
			return "", err
		}
		if len(rest) > 2 { // not {}
			b = append(b, ',')
			b = append(b, rest[1:len(rest)-1]...) // without its braces
		}
	}
	b = append(b, '}')
	*buf = b
	return string(b), nil
}

// argvBuffers are Store.argv's buffers; those grown past maxPooledArgv
// (a large batch) are left to the collector.
var argvBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

const maxPooledArgv = 64 << 10

// run runs one script call and decodes its reply into out (which may be
// nil). It returns the reply's common part; a reply with an error code is
// not an error here (the caller maps the code).
func (s *Store) run(ctx context.Context, c *call, out any) (*reply, error) {
	if c.now.IsZero() {
		c.now = s.now()
	}
	arg, err := s.argv(c)
	if err != nil {
		return nil, ocypod.Internal(err)
	}
	b := c.sc.get()
	res, err := s.exec(ctx, s.opDeadline(), b, s.keysOf(b, c), arg)
	if err != nil {
		return nil, translate(err)
	}
	r, err := decodeReply(res, out)
	if r != nil {
		r.p = c.p
	}
	return r, err
}

// Script modes (Options.Scripts).
const (
	modeAuto int32 = iota
	modeFunctions
	modeEval
)

// exec runs a built script: with FCALL while the server has functions
// (loading the library where it is missing), else with EVALSHA (EVAL when
// the server does not have the script yet). Each is one call of its own,
// or goes with other operations' calls through s.pipe. All of it ends by
// deadline (zero: none but ctx's).
func (s *Store) exec(ctx context.Context, deadline time.Time, b *built, keys []string, arg string) (string, error) {
	if s.mode.Load() != modeEval {
		res, err := s.script(ctx, deadline, "fcall", b.fn, keys, arg)
		if functionMissing(err) {
			lctx, cancel := withDeadline(ctx, deadline)
			err = s.loadLibrary(lctx)
			cancel()
			if err == nil {
				res, err = s.script(ctx, deadline, "fcall", b.fn, keys, arg)
			}
		}
		switch {
		case err == nil:
			s.mode.CompareAndSwap(modeAuto, modeFunctions)
			return res, nil
		case s.mode.Load() != modeFunctions && functionsUnsupported(err):
			// Auto mode on a server without FUNCTION (concurrent first calls
			// may all land here).
			s.mode.Store(modeEval)
			s.log.Debug("Redis Functions are not available here; scripts run with EVALSHA", "reason", err.Error())
		default:
			return "", err
		}
	}
	// NOSCRIPT means the script did not run: EVAL sends it, and loads it.
	res, err := s.script(ctx, deadline, "evalsha", b.rs.Hash(), keys, arg)
	if redis.HasErrorPrefix(err, "NOSCRIPT") {
		res, err = s.script(ctx, deadline, "eval", b.src, keys, arg)
	}
	return res, err
}

// script sends one script command (fcall, evalsha or eval: name, then the
// function, hash or source) and returns its text reply, by deadline (zero:
// none but ctx's).
func (s *Store) script(ctx context.Context, deadline time.Time, cmd, name string, keys []string, arg string) (string, error) {
	if s.pipe != nil {
		return s.pipe.do(ctx, deadline, scriptCmd(ctx, cmd, name, keys, arg))
	}
	ctx, cancel := withDeadline(ctx, deadline)
	defer cancel()
	c := scriptCmd(ctx, cmd, name, keys, arg)
	_ = s.rdb.Process(ctx, c)
	return c.Text()
}

// scriptCmd is a script command: cmd (fcall, evalsha or eval), name (the
// function, hash or source), the number of keys, the keys, arg. A cluster
// client sends it to the node of its first key.
func scriptCmd(ctx context.Context, cmd, name string, keys []string, arg string) *redis.Cmd {
	args := make([]any, 0, len(keys)+4)
	args = append(args, cmd, name, len(keys))
	for _, k := range keys {
		args = append(args, k)
	}
	args = append(args, arg)
	c := redis.NewCmd(ctx, args...)
	if len(keys) > 0 {
		c.SetFirstKeyPos(3)
	}
	return c
}

// loadLibrary loads the scripts' library (on every primary of a cluster).
// A library of this name is this very code, so "already exists" is fine.
func (s *Store) loadLibrary(ctx context.Context) error {
	load := func(ctx context.Context, c redis.Cmdable) error {
		err := c.FunctionLoad(ctx, library()).Err()
		if err != nil && strings.Contains(err.Error(), "already exists") {
			return nil
		}
		return err
	}
	if cc, ok := s.rdb.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return load(ctx, c) })
	}
	return load(ctx, s.rdb)
}

// functionMissing reports the error of an FCALL whose library is not
// loaded on the node that answered.
func functionMissing(err error) bool {
	return err != nil && strings.Contains(err.Error(), "Function not found")
}

// functionsUnsupported reports an error that says the server has no Redis
// Functions (or refuses them): the store then uses EVALSHA.
func functionsUnsupported(err error) bool {
	if err == nil {
		return false
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "unknown command") || strings.Contains(msg, "not allowed") ||
		strings.Contains(msg, "noperm") || strings.Contains(msg, "not supported")
}

// decodeReply decodes a script's JSON reply.
func decodeReply(res string, out any) (*reply, error) {
	if res == "[]" { // an empty Lua table, as miniredis's cjson writes it
		res = "{}"
	}
	r := &reply{raw: []byte(res)}
	if err := json.Unmarshal(r.raw, r); err != nil {
		return nil, ocypod.Internal(fmt.Errorf("unexpected script reply %.200q: %v", res, err))
	}
	if out != nil && r.Err == "" {
		if err := json.Unmarshal(r.raw, out); err != nil {
			return nil, ocypod.Internal(fmt.Errorf("unexpected script reply %.200q: %v", res, err))
		}
	}
	return r, nil
}

// runAll runs calls in one pipelined round (a cluster client splits it by
// node) and decodes each reply into outs[i]. A script the server does not
// have yet (NOSCRIPT, which a pipeline cannot recover from by itself) is
// then run on its own, which loads it. errs[i] is the error of call i.
func (s *Store) runAll(ctx context.Context, calls []*call, outs []any) ([]*reply, []error) {
	replies := make([]*reply, len(calls))
	errs := make([]error, len(calls))
	if len(calls) == 0 {
		return replies, errs
	}
	if len(calls) == 1 {
		replies[0], errs[0] = s.run(ctx, calls[0], outs[0])
		return replies, errs
	}
	if s.mode.Load() == modeAuto {
		// The first call tells how scripts run here; the rest go together.
		replies[0], errs[0] = s.run(ctx, calls[0], outs[0])
		r, e := s.runAll(ctx, calls[1:], outs[1:])
		return append(replies[:1], r...), append(errs[:1], e...)
	}
	functions := s.mode.Load() == modeFunctions
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	now := s.now()
	cmds := make([]*redis.Cmd, len(calls))
	_, _ = s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, c := range calls {
			if c.now.IsZero() {
				c.now = now
			}
			arg, err := s.argv(c)
			if err != nil {
				errs[i] = ocypod.Internal(err)
				continue
			}
			b := c.sc.get()
			if functions {
				cmds[i] = scriptCmd(ctx, "fcall", b.fn, s.keysOf(b, c), arg)
			} else {
				cmds[i] = scriptCmd(ctx, "evalsha", b.rs.Hash(), s.keysOf(b, c), arg)
			}
			_ = pipe.Process(ctx, onceCmd{cmds[i]})
		}
		return nil
	})
	for i, cmd := range cmds {
		if cmd == nil {
			continue
		}
		res, err := cmd.Text()
		if err != nil && (redis.HasErrorPrefix(err, "NOSCRIPT") || functionMissing(err)) {
			replies[i], errs[i] = s.run(ctx, calls[i], outs[i])
			continue
		}
		if err != nil {
			errs[i] = translate(err)
			continue
		}
		replies[i], errs[i] = decodeReply(res, outs[i])
		if replies[i] != nil {
			replies[i].p = calls[i].p
		}
	}
	return replies, errs
}

// list is a JSON array that also accepts {} (cjson writes an empty Lua
// table as an object) and null.
type list[T any] []T

func (l *list[T]) UnmarshalJSON(b []byte) error {
	if s := strings.TrimSpace(string(b)); s == "{}" || s == "null" {
		*l = nil
		return nil
	}
	return json.Unmarshal(b, (*[]T)(l))
}

// dict is a JSON object that also accepts [] (an empty Lua table, as
// miniredis's cjson writes it) and null.
type dict[V any] map[string]V

func (d *dict[V]) UnmarshalJSON(b []byte) error {
	if s := strings.TrimSpace(string(b)); s == "[]" || s == "null" {
		*d = nil
		return nil
	}
	return json.Unmarshal(b, (*map[string]V)(d))
}

// idStr is a job id that scripts send as a decimal string (or a number).
type idStr uint64

func (v *idStr) UnmarshalJSON(b []byte) error {
	n, err := strconv.ParseUint(strings.Trim(string(b), `"`), 10, 64)
	*v = idStr(n)
	return err
}

// ids converts ids from a reply.
func ids(l list[idStr]) []uint64 {
	out := make([]uint64, len(l))
	for i, v := range l {
		out[i] = uint64(v)
	}
	return out
}

// flexNum is a number that may be stored as a JSON number or a decimal
// string (values beyond 2^46 are strings).
type flexNum string

func (v *flexNum) UnmarshalJSON(b []byte) error {
	*v = flexNum(strings.Trim(string(b), `"`))
	return nil
}

func (v flexNum) uint() (uint64, error) {
	if v == "" {
		return 0, nil
	}
	if n, err := strconv.ParseUint(string(v), 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("invalid number %q", string(v))
	}
	return uint64(f), nil
}

func (v flexNum) int() (int64, error) {
	if v == "" {
		return 0, nil
	}
	if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return 0, fmt.Errorf("invalid number %q", string(v))
	}
	return int64(f), nil
}

// ConfigOptions are the store's options of a configuration: namespace,
// partitions, script mode (EVALSHA on ElastiCache Serverless unless the
// configuration says otherwise), sweep batch, statistics history, worker
// expiry and the most waiting takes. The caller adds the logger, clock and
// admission check.
func ConfigOptions(c config.Config) Options {
	scripts := c.Redis.Scripts
	if scripts == "auto" && c.Redis.Serverless {
		// Redis Functions are not documented for ElastiCache Serverless.
		scripts = "eval"
	}
	return Options{
		Namespace:    c.Redis.KeyNamespace,
		Partitions:   c.Redis.Partitions,
		Scripts:      scripts,
		SweepBatch:   c.Sweep.Batch,
		StatsDays:    c.Server.StatsHistory,
		WorkerExpiry: c.Server.WorkerExpiry,
		MaxLongPolls: c.Server.MaxLongPolls,
	}
}
