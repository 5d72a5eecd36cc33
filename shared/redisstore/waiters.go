package redisstore

import (
	"context"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Long-polling takes wait in a hub, one per Store: no Redis connection per
// waiter. The hub holds one subscription to the namespace's wake channel
// (a dedicated pub/sub connection, outside the pool that serves requests),
// on which the store publishes the names of the queues a script made worth
// a new look (a job became ready, a running job of a concurrency-limited
// queue ended, the queue's settings changed) — every process subscribed
// hears it, so takes waiting in other processes (other Lambdas) wake too.
//
// A take joins the hub before its first attempt and leaves it when it
// answers, so a wake published after an attempt that found nothing always
// reaches it (take, then wait, with the recheck the wake triggers). When
// the subscription is (re)established, every waiter looks again: whatever
// was published while it was down is covered by that look.
//
// A message wakes one waiter of each named queue per process, the one that
// has waited longest; a waiter that took all it asked for (there may be
// more), or that ends without acting on its wake-up, passes it on to the
// next. So a create costs one take per process, not one per waiter.
//
// A waiting GET /job/{id}?wait= (WaitJob) waits in the same hub, under the
// same cap: it joins before its first read (which marks the job as waited
// for, get_job.lua), and the script that ends the job for good publishes
// "#<id>" on the same channel (queue names never hold '#'); that wakes
// every waiter of the job in every process, and each reads the job again.

// hubPing is how often an idle subscription is checked: a ping, and a
// reconnection (with every waiter looking again) when its answer has not
// come by the next check.
const hubPing = 3 * time.Second

// hubLinger is how long the subscription stays open without waiters, so
// that workers polling one after the other do not subscribe every time.
const hubLinger = 30 * time.Second

// hub is a Store's long-poll waiters and its wake channel subscription.
type hub struct {
	s       *Store
	channel string
	max     int

	mu sync.Mutex
	// queues lists the waiters of each queue, the longest waiting first;
	// jobs the waiters of each job.
	queues map[string][]*waiter
	jobs   map[uint64][]*waiter
	n      int
	// running is set while the subscription loop runs; idleSince is when
	// the last waiter left.
	running   bool
	idleSince time.Time
	// up is closed when the running loop's subscription is first
	// confirmed.
	up chan struct{}
	// parked counts the waiters between attempts; onPark, when set, is
	// called as one parks (tests).
	parked atomic.Int64
	onPark atomic.Pointer[func()]
}

// waiter is one waiting take, or one wait for a job's end (job set).
type waiter struct {
	queues []string
	job    uint64
	wake   chan struct{} // a wake-up not acted on yet; buffered 1
	woken  bool          // it has acted on a wake-up
}

func newHub(s *Store, max int) *hub {
	return &hub{s: s, channel: s.l.key(0, keyWake), max: max, queues: map[string][]*waiter{},
		jobs: map[uint64][]*waiter{}}
}

// jobToken is how a wake message names a job that ended.
const jobToken = "#"

// joinJob registers a wait for job id's end; nil when the process already
// has its most waiters (the request then answers at once).
func (h *hub) joinJob(id uint64) *waiter {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n >= h.max {
		return nil
	}
	w := &waiter{job: id, wake: make(chan struct{}, 1)}
	h.jobs[id] = append(h.jobs[id], w)
	h.n++
	h.startLocked()
	return w
}

// startLocked starts the subscription loop unless it runs.
func (h *hub) startLocked() {
	if !h.running {
		h.running = true
		h.up = make(chan struct{})
		go h.loop(h.up)
	}
}

// join registers a waiting take on queues; nil when the process already
// has its most waiting takes (the take then answers at once).
func (h *hub) join(queues []string) *waiter {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n >= h.max {
		return nil
	}
	w := &waiter{wake: make(chan struct{}, 1)}
	for _, q := range queues {
		if !slices.Contains(w.queues, q) {
			w.queues = append(w.queues, q)
			h.queues[q] = append(h.queues[q], w)
		}
	}
	h.n++
	h.startLocked()
	return w
}

// leave unregisters w. A wake-up it was given and has not acted on, or
// that it acted on and took all it asked for with (the queue may hold
// more), or cut short (cancelled, failed), goes to the next waiter of each
// of its queues.
func (h *hub) leave(w *waiter, full bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, q := range w.queues {
		l := slices.DeleteFunc(h.queues[q], func(x *waiter) bool { return x == w })
		if len(l) == 0 {
			delete(h.queues, q)
		} else {
			h.queues[q] = l
		}
	}
	if w.job != 0 {
		l := slices.DeleteFunc(h.jobs[w.job], func(x *waiter) bool { return x == w })
		if len(l) == 0 {
			delete(h.jobs, w.job)
		} else {
			h.jobs[w.job] = l
		}
	}
	h.n--
	if h.n == 0 {
		h.idleSince = time.Now()
	}
	if len(w.wake) > 0 || (w.woken && full) {
		for _, q := range w.queues {
			h.wakeOneLocked(q)
		}
	}
}

// wait parks w until a wake-up, d, or the end of ctx; false when ctx ended.
func (h *hub) wait(ctx context.Context, w *waiter, d time.Duration) bool {
	h.parked.Add(1)
	defer h.parked.Add(-1)
	if f := h.onPark.Load(); f != nil {
		(*f)()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.wake:
		w.woken = true
	case <-t.C:
	case <-ctx.Done():
		return false
	}
	return true
}

// wakeOneLocked wakes the longest waiting waiter of q that has no wake-up
// pending; none when all have one.
func (h *hub) wakeOneLocked(q string) {
	for _, w := range h.queues[q] {
		select {
		case w.wake <- struct{}{}:
			return
		default:
		}
	}
}

// wakeQueues wakes one waiter of each of queues, and every waiter of each
// job named "#<id>".
func (h *hub) wakeQueues(queues []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, q := range queues {
		if idText, ok := strings.CutPrefix(q, jobToken); ok {
			id, err := strconv.ParseUint(idText, 10, 64)
			if err != nil {
				continue
			}
			for _, w := range h.jobs[id] {
				select {
				case w.wake <- struct{}{}:
				default:
				}
			}
			continue
		}
		h.wakeOneLocked(q)
	}
}

// wakeAll makes every waiter look again.
func (h *hub) wakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, l := range h.queues {
		for _, w := range l {
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
	}
	for _, l := range h.jobs {
		for _, w := range l {
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
	}
}

// stopIdle ends the loop when no waiter came for hubLinger.
func (h *hub) stopIdle() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == 0 && time.Since(h.idleSince) >= hubLinger {
		h.running = false
		return true
	}
	return false
}

// stop ends the loop for good (the client is closed): waiters look again
// and fail as every other call does.
func (h *hub) stop() {
	h.mu.Lock()
	h.running = false
	h.mu.Unlock()
	h.wakeAll()
}

// loop holds the subscription while there are waiters (and hubLinger
// after), wakes them by the messages, and makes every one look again when
// the subscription is confirmed, the first time and after a reconnection.
func (h *hub) loop(up chan struct{}) {
	ctx := context.Background()
	ps := h.s.rdb.Subscribe(ctx, h.channel)
	defer func() { _ = ps.Close() }()
	pinged, failures := false, 0
	for {
		msg, err := ps.ReceiveTimeout(ctx, hubPing)
		var ne net.Error
		switch {
		case errors.Is(err, redis.ErrClosed):
			h.stop()
			return
		case err != nil && errors.As(err, &ne) && ne.Timeout():
			if h.stopIdle() {
				return
			}
			if pinged {
				// No answer to the last ping: the connection is gone
				// without saying so. A new subscription's confirmation
				// wakes everyone.
				_ = ps.Close()
				ps = h.s.rdb.Subscribe(ctx, h.channel)
				pinged = false
				continue
			}
			pinged = ps.Ping(ctx) == nil
			continue
		case err != nil:
			// go-redis reconnects and subscribes again on the next call;
			// its confirmation wakes everyone.
			failures++
			if failures == 2 {
				h.s.log.Warn("long-poll wake subscription failed; retrying",
					"error", ocypod.RedactSecrets(err.Error()))
			}
			if failures > 1 {
				time.Sleep(min(time.Duration(failures)*100*time.Millisecond, time.Second))
			}
			if h.stopIdle() {
				return
			}
			continue
		}
		failures, pinged = 0, false
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				h.wakeAll()
				if up != nil {
					close(up)
					up = nil
				}
			}
		case *redis.Message:
			h.wakeQueues(strings.Fields(m.Payload))
		}
	}
}

// LongPolls is how many takes and job waits wait in this process now.
func (s *Store) LongPolls() int {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return s.hub.n
}

// publishWake tells every process's waiting takes of queues to look again.
func (s *Store) publishWake(ctx context.Context, queues []string) {
	var names []string
	for _, q := range queues {
		if !slices.Contains(names, q) {
			names = append(names, q)
		}
	}
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	if err := s.rdb.Publish(ctx, s.hub.channel, strings.Join(names, " ")).Err(); err != nil {
		s.log.WarnContext(ctx, "waking takers failed", "error", ocypod.RedactSecrets(err.Error()))
	}
}
