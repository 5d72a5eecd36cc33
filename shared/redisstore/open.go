package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// OpenInfo reports what Open found.
type OpenInfo struct {
	// Fresh is set when the namespace held no data: it now records its
	// layout version and partition count.
	Fresh bool
	// Upgrade is set when the namespace's layout is older than this
	// version's (version-1 data, or an upgrade begun and unfinished):
	// Upgrade must bring it up, reporting done, before the store serves
	// (Open touched nothing).
	Upgrade bool
	// Layout is the namespace's layout version (1 for version-1 data) when
	// Upgrade is set.
	Layout int
	// Upgrading is set with Upgrade when a process holds the upgrade lock
	// now: Upgrade waits for it, or takes over once its lease lapses.
	Upgrading bool
	// Eviction is the maxmemory-policy of the Redis nodes ("" when the
	// server does not let us read it, as ElastiCache Serverless).
	Eviction string
}

// ErrPartitionsChanged is the error of Open when the namespace's data was
// written with another partition count.
var ErrPartitionsChanged = errors.New("partitions cannot change once a namespace holds data")

// Open checks that the store can serve from this Redis: the namespace's
// layout (version 4, written with the same partition count; recorded now
// when the namespace is empty; an older layout, or an upgrade begun and
// unfinished, reported in OpenInfo.Upgrade: the store must not serve until
// Upgrade reports done)
// and the eviction policy (an allkeys-* maxmemory-policy is refused: Redis
// would silently drop jobs under memory pressure). Errors name what is
// wrong and what to set; ocypod.Unavailable when Redis cannot be reached.
func (s *Store) Open(ctx context.Context) (OpenInfo, error) {
	var info OpenInfo
	policy, err := s.evictionPolicy(ctx)
	if err != nil {
		return info, err
	}
	info.Eviction = policy
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	// The layout record lives under the namespace's own tag whatever the
	// partition count, so stores with different counts find it.
	meta := "{" + s.l.ns + "}:meta"
	got, err := s.rdb.HGetAll(ctx, meta).Result()
	if err != nil {
		return info, fmt.Errorf("redisstore: open: %w", translate(err))
	}
	if got["version"] == "" {
		v1 := "{" + s.l.ns + "}:"
		n, err := s.rdb.Exists(ctx, v1+"job_id", v1+"queues").Result()
		if err != nil {
			return info, fmt.Errorf("redisstore: open: %w", translate(err))
		}
		if n > 0 {
			if s.l.P != 1 {
				return info, fmt.Errorf("redisstore: namespace %q holds version-1 data, which upgrades with partitions 1 only (partitions is %d)", s.l.ns, s.l.P)
			}
			return s.unfinished(ctx, info, 1)
		}
		pipe := s.rdb.TxPipeline()
		pipe.HSetNX(ctx, meta, "version", strconv.Itoa(layoutVersion))
		pipe.HSetNX(ctx, meta, "partitions", s.l.P)
		read := pipe.HGetAll(ctx, meta)
		if _, err := pipe.Exec(ctx); err != nil {
			return info, fmt.Errorf("redisstore: open: %w", translate(err))
		}
		got, info.Fresh = read.Val(), true
	}
	version, err := strconv.Atoi(got["version"])
	if err != nil || version < 1 || version > layoutVersion {
		return info, fmt.Errorf("redisstore: namespace %q has layout version %q; this server knows version %d", s.l.ns, got["version"], layoutVersion)
	}
	if p := got["partitions"]; p != fmt.Sprint(s.l.P) {
		return info, fmt.Errorf("redisstore: namespace %q was written with partitions = %s, not %d: %w (set partitions back to %s)",
			s.l.ns, p, s.l.P, ErrPartitionsChanged, p)
	}
	if version < layoutVersion {
		return s.unfinished(ctx, info, version)
	}
	s.servable.Store(true)
	return info, nil
}

// Servable reports whether the store may serve: true once Open (or
// Upgrade) has found this version's layout, which it remembers; false
// while the namespace's layout is older (an upgrade unfinished, see
// OpenInfo.Upgrade). Until then each call runs Open, whose errors it
// returns (ocypod.Unavailable when Redis cannot be reached).
func (s *Store) Servable(ctx context.Context) (bool, error) {
	if s.servable.Load() {
		return true, nil
	}
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	info, err := s.Open(ctx)
	if err != nil {
		return false, err
	}
	return !info.Upgrade, nil
}

// unfinished is Open's report of a namespace of layout version v, older
// than this version's: an upgrade is due, perhaps under way.
func (s *Store) unfinished(ctx context.Context, info OpenInfo, v int) (OpenInfo, error) {
	held, err := s.upgradeHeld(ctx)
	if err != nil {
		return info, fmt.Errorf("redisstore: open: %w", err)
	}
	info.Upgrade, info.Layout, info.Upgrading = true, v, held
	return info, nil
}

// evictionPolicy reads maxmemory-policy on every node and refuses allkeys-*
// policies. A server that does not let us read it gives "" (not checked).
func (s *Store) evictionPolicy(ctx context.Context) (string, error) {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	var mu sync.Mutex
	var policies []string
	check := func(ctx context.Context, c redis.Cmdable, addr string) error {
		res, err := c.ConfigGet(ctx, "maxmemory-policy").Result()
		if err != nil {
			if classify(err) != nil {
				return translate(err)
			}
			return nil // CONFIG is disabled or renamed here: not checked
		}
		p := res["maxmemory-policy"]
		if strings.HasPrefix(p, "allkeys-") {
			return fmt.Errorf("redisstore: Redis %s has maxmemory-policy %s, which evicts any key under memory pressure and would silently lose jobs; set maxmemory-policy to noeviction (on ElastiCache, in the cache's parameter group)", addr, p)
		}
		mu.Lock()
		policies = append(policies, p)
		mu.Unlock()
		return nil
	}
	var err error
	if cc, ok := s.rdb.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return check(ctx, c, c.Options().Addr) })
	} else {
		err = check(ctx, s.rdb, "")
	}
	if err != nil {
		return "", err
	}
	if len(policies) == 0 {
		return "", nil
	}
	return policies[0], nil
}

// policyCheck caches the eviction policy check of Ping for a minute.
type policyCheck struct {
	mu  sync.Mutex
	at  time.Time
	err error
}

// checkPolicy runs evictionPolicy at most once a minute and returns its
// refusal (as ocypod.Internal with the message), if any.
func (s *Store) checkPolicy(ctx context.Context) error {
	s.policy.mu.Lock()
	defer s.policy.mu.Unlock()
	if !s.policy.at.IsZero() && time.Since(s.policy.at) < time.Minute {
		return s.policy.err
	}
	_, err := s.evictionPolicy(ctx)
	if err != nil && ocypod.ErrorKind(err) == ocypod.KindUnavailable {
		return err // not cached: try again next time
	}
	if err != nil {
		err = &ocypod.Error{Kind: ocypod.KindInternal, Message: "Redis evicts keys: set maxmemory-policy to noeviction", Err: err}
	}
	s.policy.at, s.policy.err = time.Now(), err
	return err
}
