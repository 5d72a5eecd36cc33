package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// shardInfo is what a process knows of a sharded queue: the shards new
// jobs go to (k), the partitions that may hold its jobs (span), and when it
// learnt that. Every create and take reply from a queue's partition
// refreshes it; reads that fan out over a queue's partitions refresh it
// from the queue's settings once it is older than shardTTL, so a process
// that only reads (a Lambda answering queue sizes) sees every partition of
// a queue sharded by another process.
type shardInfo struct {
	k, span int
	at      time.Time
}

// shardTTL is how long what a process knows of a queue's shards is trusted
// by the reads that fan out over them.
const shardTTL = 10 * time.Second

func (s *Store) shardOf(q string) shardInfo {
	if s.l.P == 1 {
		return shardInfo{k: 1, span: 1}
	}
	if v, ok := s.shardCache.Load(q); ok {
		return v.(shardInfo)
	}
	return shardInfo{k: 1, span: 1}
}

// shards is how many shards new jobs of queue q spread over.
func (s *Store) shards(q string) int { return max(s.shardOf(q).k, 1) }

// span is how many partitions may hold jobs of queue q, as far as this
// process knows.
func (s *Store) span(q string) int { return max(s.shardOf(q).span, s.shards(q), 1) }

// freshSpan is span, first read again from the queue's settings (one
// HGET) when what this process knows of it is missing or older than
// shardTTL. A failed read leaves it as it was: the operation that follows
// meets the same Redis and reports its own error.
func (s *Store) freshSpan(ctx context.Context, q string) int {
	if s.l.P == 1 {
		return 1
	}
	if v, ok := s.shardCache.Load(q); ok && time.Since(v.(shardInfo).at) < shardTTL {
		return s.span(q)
	}
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	text, err := s.rdb.HGet(ctx, s.l.key(s.l.home(q), keyQueues), q).Result()
	var st storedQueue
	switch {
	case errors.Is(err, redis.Nil):
		s.noteShards(q, []int{1, 1})
	case err == nil && json.Unmarshal([]byte(text), &st) == nil:
		s.noteShards(q, []int{st.Shards, st.Span})
	}
	return s.span(q)
}

// noteShards records a queue's shards from a reply ([k, span]).
func (s *Store) noteShards(q string, ks []int) {
	if s.l.P == 1 || len(ks) != 2 {
		return
	}
	s.shardCache.Store(q, shardInfo{k: max(ks[0], 1), span: max(ks[1], ks[0], 1), at: time.Now()})
}

// pickShard chooses the shard (0..k-1) of a new job: a keyed job's is
// always 0, the queue's home, whatever k (see keys.go), else at random.
func (s *Store) pickShard(key string, k int) int {
	if key != "" {
		return 0
	}
	return rand.IntN(k)
}

// queueSettingsArg is a queue's Ocypod settings as put_queue.lua and
// import.lua take them (short names as stored): timeout, heartbeat
// timeout, expiry (seconds), retries and retry delays (JSON text; none:
// "").
type queueSettingsArg struct {
	T luaUint `json:"t"`
	H luaUint `json:"h"`
	E luaUint `json:"e"`
	R luaUint `json:"r"`
	D string  `json:"d,omitempty"`
}

// queueSettingsOfPut is PUT's settings for put_queue.lua.
func queueSettingsOfPut(qs ocypod.QueueSettings) queueSettingsArg {
	return queueSettingsArg{T: luaUint(qs.Timeout.Secs), H: luaUint(qs.HeartbeatTimeout.Secs),
		E: luaUint(qs.ExpiresAfter.Secs), R: luaUint(qs.Retries), D: encodeDelays(qs.RetryDelays)}
}

// putQueueArgs is put_queue.lua's argument to create or change a queue
// (the call's) in its home partition.
type putQueueArgs struct {
	Settings queueSettingsArg `json:"settings"`
	Home     int              `json:"home"`
}

// replicaArgs is put_queue.lua's argument to copy a queue's settings (the
// JSON text Replica) to its shard Index.
type replicaArgs struct {
	Replica string `json:"replica"`
	Index   int    `json:"index"`
}

// PutQueue creates the queue name or replaces its Ocypod settings (timeout,
// heartbeat_timeout, expires_after, retries, retry_delays: missing fields
// are not merged: qs is the whole new setting). The extension settings
// (paused, concurrency, ...) are changed by PatchQueue only and stay.
// created reports whether the queue is new. Jobs already created keep
// their settings. Returns ocypod.InvalidQueueName for a bad name.
func (s *Store) PutQueue(ctx context.Context, name string, qs ocypod.QueueSettings) (created bool, err error) {
	fail := func(err error) (bool, error) { return false, fmt.Errorf("redisstore: put queue %q: %w", name, err) }
	if !ocypod.ValidQueueName(name) {
		return fail(ocypod.InvalidQueueName())
	}
	home := s.l.home(name)
	var got struct {
		Created  bool   `json:"created"`
		Settings string `json:"settings"`
	}
	r, err := s.run(ctx, &call{sc: scriptPutQueue, p: home, queue: name,
		args: &putQueueArgs{Settings: queueSettingsOfPut(qs), Home: home}}, &got)
	if err == nil && r.Err != "" {
		err = refusal(r, 0, name, nil)
	}
	if err != nil {
		return fail(err)
	}
	if err := s.replicate(ctx, name, got.Settings); err != nil {
		return fail(err)
	}
	return got.Created, nil
}

// replicate copies the settings text of a sharded queue to its other
// partitions (one pipelined round), each copy with its shard index.
// Nothing to do for an unsharded queue.
func (s *Store) replicate(ctx context.Context, name, text string) error {
	var st storedQueue
	if err := json.Unmarshal([]byte(text), &st); err != nil {
		return ocypod.Internal(fmt.Errorf("queue %q: unreadable settings: %v", name, err))
	}
	span := max(st.Span, st.Shards, 1)
	if span <= 1 {
		s.noteShards(name, []int{st.Shards, st.Span})
		return nil
	}
	var calls []*call
	for i := 1; i < span; i++ {
		calls = append(calls, &call{sc: scriptPutQueue, p: s.l.shard(st.Home, i), queue: name,
			args: &replicaArgs{Replica: text, Index: i}})
	}
	_, errs := s.runAll(ctx, calls, make([]any, len(calls)))
	if err := errors.Join(errs...); err != nil {
		return err
	}
	// Only now: this process's creates may go to every shard.
	s.noteShards(name, []int{st.Shards, st.Span})
	return nil
}

// GetQueue returns the settings of queue name. Returns ocypod.QueueNotFound
// when it does not exist, ocypod.InvalidQueueName for a bad name.
func (s *Store) GetQueue(ctx context.Context, name string) (ocypod.QueueSettings, error) {
	fail := func(err error) (ocypod.QueueSettings, error) {
		return ocypod.QueueSettings{}, fmt.Errorf("redisstore: get queue %q: %w", name, err)
	}
	if !ocypod.ValidQueueName(name) {
		return fail(ocypod.InvalidQueueName())
	}
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	text, err := s.rdb.HGet(ctx, s.l.key(s.l.home(name), keyQueues), name).Result()
	if errors.Is(err, redis.Nil) {
		return fail(ocypod.QueueNotFound(name))
	}
	if err != nil {
		return fail(translate(err))
	}
	var st storedQueue
	if err := json.Unmarshal([]byte(text), &st); err != nil {
		return fail(ocypod.Internal(fmt.Errorf("queue %q: unreadable settings: %v", name, err)))
	}
	s.noteShards(name, []int{st.Shards, st.Span})
	qs, err := st.settings()
	if err != nil {
		return fail(ocypod.Internal(fmt.Errorf("queue %q: %v", name, err)))
	}
	return qs, nil
}

// PatchQueue merges p into queue name's settings (PATCH /queue/{name}).
// Returns ocypod.QueueNotFound (also for a dead letter queue that does not
// exist), ocypod.InvalidQueueName, ocypod.Invalid for
// settings that do not fit together (a concurrency or a rate limit burst
// below the shards of a sharded queue, more shards than partitions).
// Shards only grow where the queue's jobs may be: lowering them sends new
// jobs to fewer shards, takes still look at every partition used so far.
func (s *Store) PatchQueue(ctx context.Context, name string, p ocypod.QueuePatch) error {
	fail := func(err error) error { return fmt.Errorf("redisstore: patch queue %q: %w", name, err) }
	if !ocypod.ValidQueueName(name) {
		return fail(ocypod.InvalidQueueName())
	}
	set, clear, err := s.patchArgs(p)
	if err != nil {
		return fail(err)
	}
	if dl := p.DeadLetterQueue; dl != nil && *dl != "" {
		// Dead letters need a queue to go to. One deleted later makes its
		// dead letters skipped (counted), the jobs staying failed.
		if err := s.checkExist(ctx, []string{name, *dl}, nil); err != nil {
			return fail(err)
		}
	}
	var got struct {
		Settings string `json:"settings"`
		Span     int    `json:"span"`
	}
	r, err := s.run(ctx, &call{sc: scriptPatchQueue, p: s.l.home(name), queue: name,
		args: &patchQueueArgs{Set: set, Clear: clear}}, &got)
	if err == nil && r.Err != "" {
		err = refusal(r, 0, name, nil)
	}
	if err == nil {
		err = s.replicate(ctx, name, got.Settings)
	}
	if err == nil {
		err = s.rebalance(ctx, name)
	}
	if err != nil {
		return fail(err)
	}
	// Waiting takes look again once every shard has the new settings.
	s.afterCall(ctx, r)
	s.queueChanged(name)
	return nil
}

// patchQueueArgs is patch_queue.lua's argument to merge settings into
// the call's queue: those to set and the names of those to remove.
type patchQueueArgs struct {
	Set   queuePatchSet `json:"set"`
	Clear []string      `json:"clear"`
}

// queuePatchSet are the settings a PATCH sets, short names as stored
// (storedQueue): those absent stay as they are.
type queuePatchSet struct {
	T  *luaUint      `json:"t,omitempty"`  // timeout (s)
	H  *luaUint      `json:"h,omitempty"`  // heartbeat timeout (s)
	E  *luaUint      `json:"e,omitempty"`  // expiry (s)
	R  *luaUint      `json:"r,omitempty"`  // retries
	D  string        `json:"d,omitempty"`  // retry delays (JSON text)
	Pa bool          `json:"pa,omitempty"` // paused (never false: cleared)
	C  *luaUint      `json:"c,omitempty"`  // concurrency
	Rl *rateLimitArg `json:"rl,omitempty"` // rate limit
	Bo string        `json:"bo,omitempty"` // retry backoff (JSON text)
	Tr *luaUint      `json:"tr,omitempty"` // timeout retries
	Dl string        `json:"dl,omitempty"` // dead letter queue
	Pu string        `json:"pu,omitempty"` // push (sealed)
	Cb string        `json:"cb,omitempty"` // callback (sealed)
	K  uint64        `json:"k,omitempty"`  // shards (1 to partitions)
}

// rateLimitArg is a rate limit as stored: tokens per second and burst.
type rateLimitArg struct {
	R float64 `json:"r"`
	B luaUint `json:"b"`
}

// shareMembersArgs is patch_queue.lua's argument to set the shards that
// share the call's queue's limits, if its settings are at version IfV.
type shareMembersArgs struct {
	Members []int `json:"members"`
	IfV     int64 `json:"if_v"`
}

// patchArgs is a patch as patch_queue.lua takes it: the settings to set
// and the names of those to remove.
func (s *Store) patchArgs(p ocypod.QueuePatch) (queuePatchSet, []string, error) {
	var set queuePatchSet
	var clear []string
	set.T, set.H, set.E = optSecs(p.Timeout), optSecs(p.HeartbeatTimeout), optSecs(p.ExpiresAfter)
	set.R = optUint(p.Retries)
	if p.RetryDelaysSet {
		if d := encodeDelays(p.RetryDelays); d != "" {
			set.D = d
			clear = append(clear, "bo")
		} else {
			clear = append(clear, "d")
		}
	}
	if p.Paused != nil {
		if *p.Paused {
			set.Pa = true
		} else {
			clear = append(clear, "pa")
		}
	}
	set.C = optUint(p.Concurrency)
	switch {
	case p.ClearRateLimit:
		clear = append(clear, "rl")
	case p.RateLimit != nil:
		set.Rl = &rateLimitArg{R: p.RateLimit.PerSecond, B: luaUint(p.RateLimit.Burst)}
	}
	switch {
	case p.ClearRetryBackoff:
		clear = append(clear, "bo")
	case p.RetryBackoff != nil:
		set.Bo = encodeBackoff(p.RetryBackoff)
		clear = append(clear, "d")
	}
	switch {
	case p.ClearTimeoutRetries:
		clear = append(clear, "tr")
	case p.TimeoutRetries != nil:
		set.Tr = optUint(p.TimeoutRetries)
	}
	if p.DeadLetterQueue != nil {
		if *p.DeadLetterQueue == "" {
			clear = append(clear, "dl")
		} else {
			set.Dl = *p.DeadLetterQueue
		}
	}
	sealed := func(field *string, name string, given bool, v ocypod.Sealed) {
		switch {
		case !given:
		case len(v) == 0:
			clear = append(clear, name)
		default:
			*field = string(v)
		}
	}
	sealed(&set.Pu, "pu", p.PushSet, p.Push)
	sealed(&set.Cb, "cb", p.CallbackSet, p.Callback)
	if p.Shards != nil {
		k := *p.Shards
		if k == 0 || k > uint64(s.l.P) {
			return set, nil, ocypod.Invalid(fmt.Sprintf("Invalid shards: must be 1 to partitions (%d)", s.l.P))
		}
		set.K = k
	}
	return set, stringList(clear), nil
}

// DeleteQueue deletes queue name: its settings at once, and its pending
// (queued, scheduled, waiting) jobs in bounded slices — this call drops
// a first slice, the sweeper the rest, so a queue of any size never blocks
// Redis for long. Its running, failed and ended jobs stay and can still
// finish, fail, be cancelled, expire and be deleted. A queue created again
// under the same name keeps its own new jobs, and never takes, counts or
// lists the pending jobs not dropped yet (nor takes the retries of the
// others, nor their dead letters). Returns ocypod.QueueNotFound
// when it does not exist, ocypod.InvalidQueueName for a bad name.
func (s *Store) DeleteQueue(ctx context.Context, name string) error {
	fail := func(err error) error { return fmt.Errorf("redisstore: delete queue %q: %w", name, err) }
	if !ocypod.ValidQueueName(name) {
		return fail(ocypod.InvalidQueueName())
	}
	home, span := s.l.home(name), s.freshSpan(ctx, name)
	// One pipelined round: the settings go from every partition of the
	// queue (the home's first), then each drops a first slice of the
	// queue's pending jobs; what is left the sweeper drops. A partition
	// runs its calls in order, so its slice follows its delete.
	var calls []*call
	for i := range span {
		calls = append(calls, &call{sc: scriptDeleteQueue, p: s.l.shard(home, i), queue: name})
	}
	drops := make([]dropReply, span)
	outs := make([]any, span, 2*span)
	for i := range span {
		calls = append(calls, &call{sc: scriptDropQueue, p: s.l.shard(home, i), args: &dropQueueArgs{Limit: dropBatch}})
		outs = append(outs, &drops[i])
	}
	replies, errs := s.runAll(ctx, calls, outs)
	if errs[0] == nil && replies[0].Err != "" {
		errs[0] = refusal(replies[0], 0, name, nil)
	}
	if err := errors.Join(errs...); err != nil {
		return fail(err)
	}
	s.shardCache.Delete(name)
	s.keysHome.Delete(name)
	for _, r := range replies[span:] {
		s.afterCall(ctx, r)
	}
	s.queueChanged(name)
	return nil
}

// dropQueueArgs is drop_queue.lua's argument: the most jobs it drops.
type dropQueueArgs struct {
	Limit int `json:"limit"`
}

// dropReply is drop_queue.lua's answer.
type dropReply struct {
	Dropped int  `json:"dropped"`
	More    bool `json:"more"`
}

// dropSlice drops up to dropBatch pending jobs of deleted queues in
// partition p and reports whether more are left.
func (s *Store) dropSlice(ctx context.Context, p int) (bool, error) {
	var got dropReply
	r, err := s.run(ctx, &call{sc: scriptDropQueue, p: p, args: &dropQueueArgs{Limit: dropBatch}}, &got)
	if err != nil {
		return false, err
	}
	s.afterCall(ctx, r)
	return got.More, nil
}

// ListQueues returns the names of every queue, sorted byte-wise (one
// pipelined round over partitions).
func (s *Store) ListQueues(ctx context.Context) ([]string, error) {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.StringSliceCmd, s.l.P)
	for p := range s.l.P {
		cmds[p] = pipe.HKeys(ctx, s.l.key(p, keyQueues))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("redisstore: list queues: %w", translate(err))
	}
	names := []string{}
	for _, c := range cmds {
		for _, f := range c.Val() {
			if ocypod.ValidQueueName(f) {
				names = append(names, f)
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// queueJobs runs queue_jobs.lua on every partition of queue name.
func (s *Store) queueJobs(ctx context.Context, name string, sizeOnly bool) ([]queueJobsReply, error) {
	if !ocypod.ValidQueueName(name) {
		return nil, ocypod.InvalidQueueName()
	}
	home, span := s.l.home(name), s.freshSpan(ctx, name)
	calls := make([]*call, span)
	outs := make([]any, span)
	for i := range span {
		calls[i] = &call{sc: scriptQueueJobs, p: s.l.shard(home, i), queue: name, args: &queueJobsArgs{SizeOnly: sizeOnly}}
		outs[i] = new(queueJobsReply)
	}
	replies, errs := s.runAll(ctx, calls, outs)
	res := make([]queueJobsReply, span)
	for i := range span {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if replies[i].Err != "" {
			if i == 0 {
				return nil, refusal(replies[i], 0, name, nil)
			}
			continue // a shard partition the queue has not reached yet
		}
		res[i] = *outs[i].(*queueJobsReply)
	}
	return res, nil
}

// queueJobsArgs is queue_jobs.lua's argument: the size alone, or the ids.
type queueJobsArgs struct {
	SizeOnly bool `json:"size_only"`
}

type queueJobsReply struct {
	Size uint64            `json:"size"`
	IDs  dict[list[idStr]] `json:"ids"`
}

// QueueSize returns the number of queued jobs of queue name (running and
// ended jobs are not counted). Returns ocypod.QueueNotFound,
// ocypod.InvalidQueueName.
func (s *Store) QueueSize(ctx context.Context, name string) (uint64, error) {
	rs, err := s.queueJobs(ctx, name, true)
	if err != nil {
		return 0, fmt.Errorf("redisstore: size of queue %q: %w", name, err)
	}
	var n uint64
	for _, r := range rs {
		n += r.Size
	}
	return n, nil
}

// QueueJobIDs returns the ids of queue name's jobs grouped by status:
// queued ones in the order they will be taken, the others ascending. Every
// Ocypod slice is non-nil. Returns ocypod.QueueNotFound when the queue is
// not registered (a deliberate difference: Ocypod answered with
// leftovers), and ocypod.InvalidQueueName for a bad name.
func (s *Store) QueueJobIDs(ctx context.Context, name string) (ocypod.JobIDs, error) {
	rs, err := s.queueJobs(ctx, name, false)
	if err != nil {
		return ocypod.JobIDs{}, fmt.Errorf("redisstore: job ids of queue %q: %w", name, err)
	}
	res := ocypod.JobIDs{Queued: []uint64{}, Running: []uint64{}, Failed: []uint64{}, Completed: []uint64{},
		Cancelled: []uint64{}, TimedOut: []uint64{}}
	dst := map[ocypod.Status]*[]uint64{
		ocypod.StatusQueued: &res.Queued, ocypod.StatusRunning: &res.Running, ocypod.StatusFailed: &res.Failed,
		ocypod.StatusCompleted: &res.Completed, ocypod.StatusCancelled: &res.Cancelled,
		ocypod.StatusTimedOut: &res.TimedOut, ocypod.StatusScheduled: &res.Scheduled, ocypod.StatusWaiting: &res.Waiting,
	}
	for _, r := range rs {
		for code, l := range r.IDs {
			if st, ok := codeStatus[code]; ok {
				*dst[st] = append(*dst[st], ids(l)...)
			}
		}
	}
	for st, d := range dst {
		if st != ocypod.StatusQueued && len(rs) > 1 {
			slices.Sort(*d)
		}
	}
	return res, nil
}
