package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Import progress: one hash under the namespace's own tag, beside the
// layout record, written only by Import. It survives the import, so that a
// second run knows it has nothing to do.
const (
	importKeyName = "import"
	// Its fields.
	impSource   = "source"      // the source, as ImportOptions.SourceName gives it
	impState    = "state"       // importCopying, then importDone
	impThrough  = "through"     // every source job id up to this one is copied
	impCounted  = "counted"     // "1" once the statistics are set
	impStarted  = "started_at"  // RFC 3339
	impFinished = "finished_at" // RFC 3339
)

const (
	importCopying = "copying"
	importDone    = "done"
)

func (s *Store) importKey() string { return "{" + s.l.ns + "}:" + importKeyName }
func (s *Store) metaKey() string   { return "{" + s.l.ns + "}:" + keyMeta }

// importTarget is what Import found in the target namespace.
type importTarget struct {
	resume   bool   // an unfinished import of this source
	done     bool   // a finished import of this source
	through  uint64 // resume: jobs up to this id are copied
	counted  bool   // resume: the statistics are set
	finished string // done: when
}

// checkTarget decides whether the namespace can receive an import of
// source: refused when it holds data of its own, another source's import,
// or a layout this store cannot open; read only.
func (s *Store) checkTarget(ctx context.Context, source string) (importTarget, error) {
	var t importTarget
	if _, err := s.evictionPolicy(ctx); err != nil {
		return t, err
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	pipe := s.rdb.Pipeline()
	meta := pipe.HGetAll(octx, s.metaKey())
	prog := pipe.HGetAll(octx, s.importKey())
	if _, err := pipe.Exec(octx); err != nil {
		return t, translate(err)
	}
	m, p := meta.Val(), prog.Val()
	if len(m) > 0 {
		if m["version"] != strconv.Itoa(layoutVersion) {
			return t, importRefused("the target namespace %q has layout version %q; this store writes version %d", s.l.ns, m["version"], layoutVersion)
		}
		if m["partitions"] != strconv.Itoa(s.l.P) {
			return t, importRefused("the target namespace %q was written with partitions = %s, not %d: %v", s.l.ns, m["partitions"], s.l.P, ErrPartitionsChanged)
		}
	}
	if len(p) > 0 {
		if p[impSource] != source {
			return t, importRefused("the target namespace %q holds an import of another source (%s); import %s into an empty namespace", s.l.ns, p[impSource], source)
		}
		if p[impState] == importDone {
			return importTarget{done: true, finished: p[impFinished]}, nil
		}
		through, _ := strconv.ParseUint(p[impThrough], 10, 64)
		return importTarget{resume: true, through: through, counted: p[impCounted] == "1"}, nil
	}
	key, err := s.someNamespaceKey(ctx)
	if err != nil {
		return t, err
	}
	if key != "" {
		return t, importRefused("the target namespace %q already holds data (such as the key %q): import into an empty namespace (another key_namespace, or delete the namespace's keys first)",
			s.l.ns, key)
	}
	return t, nil
}

// someNamespaceKey returns a key of the namespace other than its layout
// record, whatever partition count wrote it (on every primary of a
// cluster), or "" when there is none.
func (s *Store) someNamespaceKey(ctx context.Context) (string, error) {
	patterns := []string{"{" + s.l.ns + "}:*", "{" + s.l.ns + ":*"}
	var mu sync.Mutex
	var found []string
	scan := func(ctx context.Context, c redis.Cmdable) error {
		for _, pat := range patterns {
			err := scanPages(ctx, c, pat, func(keys []string) (bool, error) {
				keys = slices.DeleteFunc(keys, func(k string) bool { return k == s.metaKey() })
				mu.Lock()
				defer mu.Unlock()
				found = append(found, keys...)
				return len(found) == 0, nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
	var err error
	if cc, ok := s.rdb.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return scan(ctx, c) })
	} else {
		err = scan(ctx, s.rdb)
	}
	if err != nil {
		return "", translate(err)
	}
	if len(found) == 0 {
		return "", nil
	}
	return slices.Min(found), nil
}

// beginImport records the import as under way and the namespace's layout,
// as Open does for an empty namespace.
func (s *Store) beginImport(ctx context.Context, source string) error {
	octx, cancel := s.opContext(ctx)
	defer cancel()
	// The layout record and the progress share the namespace's own tag, so
	// one transaction writes both.
	pipe := s.rdb.TxPipeline()
	pipe.HSetNX(octx, s.metaKey(), "version", strconv.Itoa(layoutVersion))
	pipe.HSetNX(octx, s.metaKey(), "partitions", s.l.P)
	pipe.HSet(octx, s.importKey(), impSource, source, impState, importCopying,
		impStarted, s.now().UTC().Format(time.RFC3339))
	_, err := pipe.Exec(octx)
	return translate(err)
}

// markImport writes progress fields.
func (s *Store) markImport(ctx context.Context, fields ...any) error {
	octx, cancel := s.opContext(context.WithoutCancel(ctx))
	defer cancel()
	return translate(s.rdb.HSet(octx, s.importKey(), fields...).Err())
}

// importCall runs one import.lua call on partition p.
func (s *Store) importCall(ctx context.Context, p int, queue string, args any, out any) error {
	r, err := s.run(ctx, &call{sc: scriptImport, p: p, queue: queue, args: args}, out)
	if err != nil {
		return err
	}
	if r.Err != "" {
		return errors.New("import.lua: " + r.Err)
	}
	return nil
}

// importCounters raises every partition's id counter above the source's
// last id (new ids continue above Ocypod's, in each partition) and its
// requeue counter above every copied queued job's place; with totals, it
// sets Ocypod's statistics (in partition 0; /info adds the partitions up).
func (s *Store) importCounters(ctx context.Context, u *upstream, totals bool) error {
	calls := make([]*call, s.l.P)
	for p := range s.l.P {
		args := &importCountersArgs{Op: "counters", Seq: luaUint(u.lastID / uint64(s.l.P)), Rq: luaUint(u.maxPos())}
		if p == 0 && totals {
			args.Totals = map[string]string{}
			for name, n := range u.totals {
				args.Totals[name] = strconv.FormatUint(n, 10)
			}
		}
		calls[p] = &call{sc: scriptImport, p: p, args: args}
	}
	replies, errs := s.runAll(ctx, calls, make([]any, len(calls)))
	for i, err := range errs {
		if err != nil {
			return err
		}
		if replies[i].Err != "" {
			return errors.New("import.lua: " + replies[i].Err)
		}
	}
	return nil
}

// importQueue creates queue q in its home partition (or finds it there)
// with a span of at least span partitions, copies its settings to the
// other partitions of the span, and returns the span.
func (s *Store) importQueue(ctx context.Context, q upstreamQueue, span int) (int, error) {
	var got struct {
		Settings string `json:"settings"`
	}
	home := s.l.home(q.name)
	err := s.importCall(ctx, home, q.name, &importQueueArgs{Op: "queue", Home: home, Span: span, Settings: q.settings}, &got)
	if err != nil {
		return 0, err
	}
	var st storedQueue
	if err := json.Unmarshal([]byte(got.Settings), &st); err != nil {
		return 0, fmt.Errorf("unreadable settings: %v", err)
	}
	return max(st.Span, 1), s.replicate(ctx, q.name, got.Settings)
}

// importQueueArgs is import.lua's argument to create the call's queue in
// its home partition with the source's settings, spanning at least Span
// partitions.
type importQueueArgs struct {
	Op       string           `json:"op"` // queue
	Home     int              `json:"home"`
	Span     int              `json:"span"`
	Settings queueSettingsArg `json:"settings"`
}

// importCountersArgs is import.lua's argument to raise the id (Seq) and
// requeue (Rq) counters, and set Ocypod's statistics (Totals: name ->
// decimal; nil: none).
type importCountersArgs struct {
	Op     string            `json:"op"` // counters
	Seq    luaUint           `json:"seq"`
	Rq     luaUint           `json:"rq"`
	Totals map[string]string `json:"totals,omitzero"`
}

// importJobsArgs is import.lua's argument to write job records.
type importJobsArgs struct {
	Op   string          `json:"op"` // jobs
	Jobs []*importRecord `json:"jobs"`
}
