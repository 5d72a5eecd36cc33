package redisstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// readOnlyGuard is the hook Import puts on the source client: it refuses,
// before it is sent, every command that is not a read or part of the
// connection handshake, so no write can reach the upstream database
// whatever the code above does.
type readOnlyGuard struct{}

// sourceCommands are the commands allowed on the source.
var sourceCommands = map[string]bool{
	"hello": true, "auth": true, "select": true, "ping": true, "client": true,
	"scan": true, "type": true, "exists": true, "get": true, "mget": true,
	"hgetall": true, "hget": true, "hmget": true, "lrange": true, "llen": true,
	"smembers": true, "scard": true,
}

// sourceClientSubcommands are the CLIENT subcommands of the handshake.
var sourceClientSubcommands = map[string]bool{"setname": true, "setinfo": true, "getname": true, "id": true}

func guardCommand(cmd redis.Cmder) error {
	name := strings.ToLower(cmd.Name())
	ok := sourceCommands[name]
	if ok && name == "client" {
		args := cmd.Args()
		ok = len(args) > 1 && sourceClientSubcommands[strings.ToLower(fmt.Sprint(args[1]))]
	}
	if !ok {
		return fmt.Errorf("redisstore: import: %q refused: the source is only read", name)
	}
	return nil
}

func (readOnlyGuard) DialHook(next redis.DialHook) redis.DialHook { return next }

func (readOnlyGuard) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := guardCommand(cmd); err != nil {
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

func (readOnlyGuard) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if err := guardCommand(cmd); err != nil {
				cmd.SetErr(err)
				return err
			}
		}
		return next(ctx, cmds)
	}
}

// upstream is what Import learns of an Ocypod 0.8 database before copying
// any job (Ocypod's key layout: reference/ocypod-behaviour.md §5.1).
type upstream struct {
	pre    string // "<ns>:" or ""
	lastID uint64 // the job_id counter (or the highest job id found)
	queues []upstreamQueue
	// pos is a queued job's place in its queue's take order (1 first): jobs
	// stranded in limbo (taken, never marked running) first, then each
	// queue's pending list from its oldest end. Queued jobs in no list
	// come after (strayPos).
	pos      map[uint64]int64
	listed   int64
	failed   map[uint64]bool // the failed list: retry decision pending
	ids      []uint64        // every job key's id, ascending
	totals   map[string]uint64
	hasStats bool
	// maxValue is the longest input or output copied (ImportOptions.MaxValueSize).
	maxValue int64
}

// upstreamQueue is a registered queue and its settings as this store keeps
// them (t, h, e, r, d).
type upstreamQueue struct {
	name     string
	settings queueSettingsArg
}

// strayPos is the place of a queued job found in no list: after every
// listed job, by id.
func (u *upstream) strayPos(id uint64) int64 { return u.listed + int64(id) }

// maxPos bounds every place handed out.
func (u *upstream) maxPos() int64 { return u.listed + int64(u.lastID) }

// upstreamStats maps Ocypod's counters (stats:jobs:num_<name>) to this
// store's /info statistics; the names are the same.
var upstreamStats = []string{"created", "completed", "retried", "failed", "timed_out", "cancelled"}

// maxImportID is the highest job id this store can hold (ids travel
// through Lua numbers).
const maxImportID = 1<<53 - 1

// refused is the error of an import that writes nothing.
func importRefused(format string, args ...any) error {
	return &ImportRefusal{Reason: fmt.Sprintf(format, args...)}
}

// ImportRefusal is the error of an Import that refused its source or
// target before writing anything.
type ImportRefusal struct{ Reason string }

func (e *ImportRefusal) Error() string { return "import refused: " + e.Reason }

// globEscape escapes the glob characters of SCAN MATCH.
func globEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// scanPages calls page with each page of the keys of rdb matching
// pattern, until it returns false or an error.
func scanPages(ctx context.Context, rdb redis.Cmdable, pattern string, page func([]string) (bool, error)) error {
	var cursor uint64
	for {
		ks, next, err := rdb.Scan(ctx, cursor, pattern, 1000).Result()
		if err != nil {
			return err
		}
		if more, err := page(ks); err != nil || !more {
			return err
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// surveyUpstream reads the shape of the upstream database under prefix
// pre: it refuses a source that holds no Ocypod data or keys of the wrong
// type, and returns everything but the jobs themselves.
func surveyUpstream(ctx context.Context, src redis.UniversalClient, ns, where string) (*upstream, error) {
	u := &upstream{pos: map[uint64]int64{}, failed: map[uint64]bool{}, totals: map[string]uint64{}}
	if ns != "" {
		u.pre = ns + ":"
	}
	// Keys come a page at a time, job keys checked as they come: only ids
	// are kept, whatever else the database holds.
	var lists []string // pending lists of queues, registered or not
	var inner error
	err := scanPages(ctx, src, globEscape(u.pre)+"*", func(keys []string) (bool, error) {
		want := map[string]string{}
		for _, k := range keys {
			rest := strings.TrimPrefix(k, u.pre)
			switch {
			case strings.HasPrefix(rest, "job:"):
				id, err := strconv.ParseUint(rest[4:], 10, 64)
				if err != nil || strconv.FormatUint(id, 10) != rest[4:] || id == 0 {
					continue // not a key Ocypod writes
				}
				if id > maxImportID {
					inner = importRefused("the source's job %d has an id above 2^53, which this store cannot hold", id)
					return false, nil
				}
				u.ids = append(u.ids, id)
				want[k] = "hash"
			case len(rest) > len("queue::jobs") && strings.HasPrefix(rest, "queue:") && strings.HasSuffix(rest, ":jobs"):
				// (Not "queue:jobs", the settings of a queue called jobs.)
				if q := rest[len("queue:") : len(rest)-len(":jobs")]; ocypod.ValidQueueName(q) {
					lists = append(lists, q)
					want[k] = "list"
				}
			}
		}
		_, inner = checkTypes(ctx, src, want, where)
		return inner == nil, nil
	})
	switch {
	case inner != nil:
		return nil, inner
	case err != nil:
		return nil, fmt.Errorf("reading the source: %w", err)
	}
	// SCAN may return a key twice.
	slices.Sort(u.ids)
	u.ids = slices.Compact(u.ids)
	slices.Sort(lists)
	lists = slices.Compact(lists)
	want := map[string]string{u.pre + "queues": "set", u.pre + "job_id": "string", u.pre + "limbo": "list",
		u.pre + "running": "list", u.pre + "failed": "list", u.pre + "ended": "list"}
	for _, name := range upstreamStats {
		want[u.pre+"stats:jobs:num_"+name] = "string"
	}
	names, err := checkTypes(ctx, src, want, where)
	if err != nil {
		return nil, err
	}
	if !names[u.pre+"queues"] && !names[u.pre+"job_id"] {
		return nil, importRefused("%s holds no Ocypod data: no key %q or %q%s", where, u.pre+"queues", u.pre+"job_id", namespaceHint(ctx, src, ns))
	}
	if err := u.readQueues(ctx, src, where); err != nil {
		return nil, err
	}
	if err := u.readLists(ctx, src, lists); err != nil {
		return nil, err
	}
	return u, u.readCounters(ctx, src, where)
}

// checkTypes checks the type of every key of want (key -> type; absent
// keys pass) and returns the keys that exist.
func checkTypes(ctx context.Context, src redis.UniversalClient, want map[string]string, where string) (map[string]bool, error) {
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	exist := map[string]bool{}
	for chunk := range slices.Chunk(keys, 1000) {
		cmds := make([]*redis.StatusCmd, len(chunk))
		_, err := src.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, k := range chunk {
				cmds[i] = p.Type(ctx, k)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading the source: %w", err)
		}
		for i, k := range chunk {
			switch got := cmds[i].Val(); got {
			case "none":
			case want[k]:
				exist[k] = true
			default:
				return nil, importRefused("%s is not an Ocypod 0.8 database: key %q is a %s, Ocypod keeps a %s there", where, k, got, want[k])
			}
		}
	}
	return exist, nil
}

// namespaceHint names the namespaces that do hold Ocypod data, when the
// one given holds none.
func namespaceHint(ctx context.Context, src redis.UniversalClient, ns string) string {
	var found []string
	err := scanPages(ctx, src, "*job_id", func(keys []string) (bool, error) {
		for _, k := range keys {
			if k == "job_id" {
				found = append(found, `"" (none)`)
			} else if n, ok := strings.CutSuffix(k, ":job_id"); ok && n != ns {
				found = append(found, strconv.Quote(n))
			}
		}
		return len(found) < 5, nil
	})
	if err != nil {
		return ""
	}
	if len(found) == 0 {
		return " (is it the right database?)"
	}
	slices.Sort(found)
	return "; Ocypod data was found under the namespace " + strings.Join(found, ", ") + " (FROM_NAMESPACE, upstream's redis.key_namespace)"
}

// readQueues reads the registered queues and their settings.
func (u *upstream) readQueues(ctx context.Context, src redis.UniversalClient, where string) error {
	names, err := src.SMembers(ctx, u.pre+"queues").Result()
	if err != nil {
		return fmt.Errorf("reading the source: %w", err)
	}
	slices.Sort(names)
	for _, q := range names {
		if !ocypod.ValidQueueName(q) {
			return importRefused("%s is not an Ocypod 0.8 database: queue name %q is not valid", where, q)
		}
		key := u.pre + "queue:" + q
		if _, err := checkTypes(ctx, src, map[string]string{key: "hash"}, where); err != nil {
			return err
		}
		h, err := src.HGetAll(ctx, key).Result()
		if err != nil {
			return fmt.Errorf("reading the source: %w", err)
		}
		s, err := queueSettingsOf(h)
		if err != nil {
			return importRefused("%s is not an Ocypod 0.8 database: %q: %v", where, key, err)
		}
		u.queues = append(u.queues, upstreamQueue{name: q, settings: s})
	}
	return nil
}

// queueSettingsOf converts an Ocypod queue hash into this store's settings.
func queueSettingsOf(h map[string]string) (queueSettingsArg, error) {
	var s queueSettingsArg
	for _, f := range []struct {
		name string
		to   *luaUint
	}{{"timeout", &s.T}, {"heartbeat_timeout", &s.H}, {"expires_after", &s.E}, {"retries", &s.R}} {
		n, err := strconv.ParseUint(h[f.name], 10, 64)
		if err != nil {
			return s, fmt.Errorf("%s %q is not a whole number", f.name, h[f.name])
		}
		*f.to = luaUint(n)
	}
	if d, ok := h["retry_delays"]; ok {
		ds, err := upstreamDelays(d)
		if err != nil {
			return s, err
		}
		s.D = encodeDelays(ds)
	}
	return s, nil
}

// readLists reads the lists that order queued jobs and mark pending
// retries.
func (u *upstream) readLists(ctx context.Context, src redis.UniversalClient, queues []string) error {
	slices.Sort(queues)
	read := func(key string) ([]uint64, error) {
		vals, err := src.LRange(ctx, key, 0, -1).Result()
		if err != nil {
			return nil, fmt.Errorf("reading the source: %w", err)
		}
		ids := make([]uint64, 0, len(vals))
		for _, v := range vals {
			if id, err := strconv.ParseUint(v, 10, 64); err == nil {
				ids = append(ids, id)
			}
		}
		return ids, nil
	}
	// Both lists grow on the left: the oldest entry is the last one.
	place := func(ids []uint64) {
		for i := len(ids) - 1; i >= 0; i-- {
			if _, ok := u.pos[ids[i]]; !ok {
				u.listed++
				u.pos[ids[i]] = u.listed
			}
		}
	}
	limbo, err := read(u.pre + "limbo")
	if err != nil {
		return err
	}
	place(limbo)
	for _, q := range queues {
		ids, err := read(u.pre + "queue:" + q + ":jobs")
		if err != nil {
			return err
		}
		place(ids)
	}
	failed, err := read(u.pre + "failed")
	if err != nil {
		return err
	}
	for _, id := range failed {
		u.failed[id] = true
	}
	return nil
}

// readCounters reads the id counter and the statistics.
func (u *upstream) readCounters(ctx context.Context, src redis.UniversalClient, where string) error {
	keys := []string{u.pre + "job_id"}
	for _, name := range upstreamStats {
		keys = append(keys, u.pre+"stats:jobs:num_"+name)
	}
	vals, err := src.MGet(ctx, keys...).Result()
	if err != nil {
		return fmt.Errorf("reading the source: %w", err)
	}
	for i, v := range vals {
		s, ok := v.(string)
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return importRefused("%s is not an Ocypod 0.8 database: %q holds %q, not a counter", where, keys[i], truncate(s))
		}
		if i == 0 {
			u.lastID = n
		} else {
			u.totals[upstreamStats[i-1]] = n
			u.hasStats = true
		}
	}
	if len(u.ids) > 0 {
		u.lastID = max(u.lastID, u.ids[len(u.ids)-1])
	}
	if u.lastID > maxImportID {
		return importRefused("%s's job id counter %d is above 2^53, which this store cannot hold", where, u.lastID)
	}
	return nil
}
