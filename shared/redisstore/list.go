package redisstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// listSource is one lex range list.lua walks.
type listSource struct {
	Index string `json:"index,omitempty"`
	Lo    string `json:"lo,omitempty"`
	Hi    string `json:"hi,omitempty"`
	Walk  string `json:"walk,omitempty"` // a status code over every queue
	// Merge is a queue whose jobs are listed by id across every status;
	// MergeAll lists every queue's so, queue by queue.
	Merge    string `json:"merge,omitempty"`
	MergeAll bool   `json:"merge_all,omitempty"`
}

// partsFor is what a page must read for fields (nil: the default fields).
func partsFor(fields []string) []string {
	if fields == nil {
		return []string{"input", "output", "error"}
	}
	var parts []string
	for _, f := range fields {
		switch f {
		case "input", "output", "error", "history", "dependents", "callback":
			if !slices.Contains(parts, f) {
				parts = append(parts, f)
			}
		}
	}
	return stringList(parts)
}

// ListJobs returns one page of jobs of queue req.Queue (or of every queue)
// matching the filters, in a stable order: by id, except queued jobs of
// one queue, which come in take order; without any filter, by id across
// every status (every queue's: queue by queue). A page costs O(limit + log n) per partition
// (the filters that no index serves are checked job by job, at most a few
// times the limit per page, so a page may hold fewer jobs than limit and
// still have a next cursor). Returns ocypod.Invalid for a bad filter or
// cursor, ocypod.QueueNotFound for a missing queue.
func (s *Store) ListJobs(ctx context.Context, req ocypod.ListRequest) (ocypod.JobPage, error) {
	fail := func(err error) (ocypod.JobPage, error) {
		return ocypod.JobPage{}, fmt.Errorf("redisstore: list jobs: %w", err)
	}
	limit := cmp.Or(req.Limit, ocypod.DefaultListLimit)
	if limit < 1 || limit > ocypod.MaxListLimit {
		return fail(ocypod.Invalid(fmt.Sprintf("Invalid limit: must be 1 to %d", ocypod.MaxListLimit)))
	}
	if req.Queue != "" {
		if !ocypod.ValidQueueName(req.Queue) {
			return fail(ocypod.InvalidQueueName())
		}
	}
	if req.Key != "" {
		if req.Queue != "" {
			if err := s.checkQueueExists(ctx, req.Queue); err != nil {
				return fail(err)
			}
		}
		return s.listByKey(ctx, req)
	}
	code := ""
	if req.Status != "" {
		var ok bool
		if code, ok = statusCodeOf(req.Status); !ok {
			return fail(ocypod.Invalid("Invalid status: " + string(req.Status)))
		}
	}
	args := &listArgs{Limit: limit, Scan: max(limit*4, 200), Parts: partsFor(req.Fields)}
	var sources []listSource
	q := req.Queue
	switch {
	case req.HasTag:
		lo, hi := lexRange(escLex(req.Tag))
		sources = []listSource{{Index: keyTags, Lo: lo, Hi: hi}}
		args.queue, args.Status, args.Worker = q, string(req.Status), req.Worker
	case req.Worker != "":
		for _, c := range []string{codeRunning, codeTimedOut} {
			if code == "" || code == c {
				lo, hi := lexRange(escLex(req.Worker) + " " + c)
				sources = append(sources, listSource{Index: keyWorkerJobs, Lo: lo, Hi: hi})
			}
		}
		args.queue = q
	case req.Tracked != nil && *req.Tracked:
		lo, hi := "-", "+"
		if q != "" {
			lo, hi = lexRange(q)
		}
		sources = []listSource{{Index: keyTracked, Lo: lo, Hi: hi}}
		args.Status = string(req.Status)
	case code != "" && q == "":
		sources = []listSource{{Walk: code}}
	case code != "":
		lo, hi := lexRange(q + " " + code)
		sources = []listSource{{Index: keyIndex, Lo: lo, Hi: hi}}
	case q != "":
		sources = []listSource{{Merge: q}}
	default:
		sources = []listSource{{MergeAll: true}}
	}
	if req.Tracked != nil && !*req.Tracked {
		args.Tracked = req.Tracked // false
	}
	args.Sources = sources
	page, err := s.listPage(ctx, req, args)
	if err != nil {
		return fail(err)
	}
	return page, nil
}

// listArgs is list.lua's argument. The filters (queue, status, worker,
// tracked) are checked on each job: those the sources do not select
// already.
type listArgs struct {
	Sources []listSource `json:"sources"`
	Limit   int          `json:"limit"` // most jobs
	Scan    int          `json:"scan"`  // most entries looked at
	Parts   []string     `json:"parts"` // of input, output, error, ...
	// queue is the queue filter, the call's queue (A.queue).
	queue   string
	Status  string `json:"status,omitempty"`
	Worker  string `json:"worker,omitempty"`
	Tracked *bool  `json:"tracked,omitempty"` // only false: untracked jobs
	// CountGroup is a failure group: the partition counts it (total).
	CountGroup *string `json:"count_group,omitempty"`
	// The fields of each partition's call: its byte budget, its cursor
	// (nil: from the start), done (only the count is asked), and the
	// queue whose home it is (queue_not_found unless it exists).
	MaxBytes  int         `json:"max_bytes"`
	After     *partCursor `json:"after,omitempty"`
	Done      bool        `json:"done,omitempty"`
	MustExist string      `json:"must_exist,omitempty"`
}

// statusCodeOf is the idx code of a status.
func statusCodeOf(st ocypod.Status) (string, bool) {
	for c, s := range codeStatus {
		if s == st {
			return c, true
		}
	}
	return "", false
}

// listed is a job of list.lua's reply, from partition part of the listing.
type listed struct {
	ID         idStr   `json:"id"`
	Sort       string  `json:"sort"`
	Meta       string  `json:"meta"`
	Input      *string `json:"input"`
	Output     *string `json:"output"`
	Error      *string `json:"error"`
	History    *string `json:"history"`
	Dependents *string `json:"dependents"`
	Callback   *string `json:"callback"`
	part       int
}

// size is what list.lua counts of a job against Options.MaxAnswerBytes:
// its stored parts plus 1024, more than the job's JSON on the page.
func (l *listed) size() int {
	n := len(l.Meta) + 1024
	for _, p := range []*string{l.Input, l.Output, l.Error, l.History, l.Dependents, l.Callback} {
		if p != nil {
			n += len(*p)
		}
	}
	return n
}

// listPartitions are the partitions a listing covers.
func (s *Store) listPartitions(ctx context.Context, queue string) []int {
	if queue == "" {
		ps := make([]int, s.l.P)
		for p := range ps {
			ps[p] = p
		}
		return ps
	}
	home, span := s.l.home(queue), s.freshSpan(ctx, queue)
	ps := make([]int, span)
	for i := range ps {
		ps[i] = s.l.shard(home, i)
	}
	return ps
}

// listPage runs list.lua on every partition the listing covers (one
// pipelined round), merges the replies in order and keeps the first limit.
func (s *Store) listPage(ctx context.Context, req ocypod.ListRequest, args *listArgs) (ocypod.JobPage, error) {
	page, _, err := s.listPageTotal(ctx, req, args)
	return page, err
}

// listPageTotal is listPage, plus the sum of the partitions' totals (a
// failure group's size, with args count_group).
func (s *Store) listPageTotal(ctx context.Context, req ocypod.ListRequest, args *listArgs) (ocypod.JobPage, uint64, error) {
	parts := s.listPartitions(ctx, req.Queue)
	query, _ := json.Marshal([]any{req.Queue, req.Status, req.HasTag, req.Tag, req.Worker, req.Tracked, args.Sources})
	cur := cursor{Query: string(query), Parts: make([]*partCursor, len(parts))}
	for i := range cur.Parts {
		cur.Parts[i] = &partCursor{I: 1}
	}
	if req.Cursor != "" {
		var err error
		if cur, err = s.decodeCursor(ctx, req.Cursor, string(query), args.Sources, len(parts)); err != nil {
			return ocypod.JobPage{}, 0, err
		}
	}
	type listReply struct {
		Jobs  list[listed] `json:"jobs"`
		Next  *partCursor  `json:"next"`
		Total flexNum      `json:"total"`
	}
	var calls []*call
	var outs []any
	var which []int
	for i, p := range parts {
		if cur.Parts[i] == nil && args.CountGroup == nil {
			continue
		}
		a := *args
		a.MaxBytes = s.o.MaxAnswerBytes
		a.Done = cur.Parts[i] == nil
		if cur.Parts[i] != nil && (cur.Parts[i].M != "" || cur.Parts[i].I > 1) {
			a.After = cur.Parts[i]
		}
		if req.Queue != "" && p == s.l.home(req.Queue) {
			// The queue's home answers queue_not_found in the same round.
			a.MustExist = req.Queue
		}
		calls = append(calls, &call{sc: scriptList, p: p, queue: a.queue, args: &a})
		outs = append(outs, new(listReply))
		which = append(which, i)
	}
	replies, errs := s.runAll(ctx, calls, outs)
	var all []listed
	var total uint64
	for n, i := range which {
		if errs[n] != nil {
			return ocypod.JobPage{}, 0, errs[n]
		}
		if replies[n].Err == "queue_not_found" {
			return ocypod.JobPage{}, 0, ocypod.QueueNotFound(req.Queue)
		}
		r := outs[n].(*listReply)
		if n, err := r.Total.uint(); err == nil {
			total += n
		}
		if cur.Parts[i] == nil {
			continue // counted only
		}
		for _, j := range r.Jobs {
			j.part = i
			all = append(all, j)
		}
		cur.Parts[i] = r.Next
	}
	slices.SortStableFunc(all, func(a, b listed) int {
		return cmp.Or(cmp.Compare(sortSource(a.Sort), sortSource(b.Sort)), strings.Compare(a.Sort, b.Sort))
	})
	// The page ends at limit jobs, or before the job that would take it
	// past Options.MaxAnswerBytes (counted as list.lua does).
	limit, size := cmp.Or(req.Limit, ocypod.DefaultListLimit), 0
	for n, l := range all {
		size += l.size()
		if n > 0 && size > s.o.MaxAnswerBytes {
			limit = min(limit, n)
			break
		}
	}
	if len(all) > limit {
		// A partition with entries left over reads them again next time:
		// its cursor goes back to its last entry on this page, or to just
		// before its first left-over one.
		back := map[int]*partCursor{}
		for _, j := range all[limit:] {
			if _, ok := back[j.part]; !ok {
				src, m := splitSort(j.Sort)
				back[j.part] = &partCursor{I: src, M: before(m)}
			}
		}
		for _, j := range all[:limit] {
			if _, ok := back[j.part]; ok {
				src, m := splitSort(j.Sort)
				back[j.part] = &partCursor{I: src, M: m}
			}
		}
		for p, c := range back {
			cur.Parts[p] = c
		}
		all = all[:limit]
	}
	page := ocypod.JobPage{Jobs: make([]*ocypod.Job, 0, len(all))}
	for _, l := range all {
		j, err := decodeJob(uint64(l.ID), l.Meta, l.Input, l.Output, l.Error)
		if err != nil {
			return ocypod.JobPage{}, 0, ocypod.Internal(err)
		}
		if l.History != nil {
			if j.History, err = decodeHistory(*l.History); err != nil {
				return ocypod.JobPage{}, 0, ocypod.Internal(err)
			}
		}
		j.CallbackView = callbackView(j.Callback, l.Callback)
		if l.Dependents != nil {
			var ds list[idStr]
			_ = json.Unmarshal([]byte(*l.Dependents), &ds)
			j.Dependents = ids(ds)
		}
		page.Jobs = append(page.Jobs, j)
	}
	if slices.ContainsFunc(cur.Parts, func(c *partCursor) bool { return c != nil }) {
		var err error
		if page.NextCursor, err = s.encodeCursor(ctx, cur); err != nil {
			return ocypod.JobPage{}, 0, err
		}
	}
	return page, total, nil
}

// splitSort splits list.lua's "<source> <member>" sort key.
func splitSort(sort string) (int, string) {
	src, m, _ := strings.Cut(sort, " ")
	n := 0
	fmt.Sscan(src, &n)
	return n, m
}

func sortSource(sort string) int { n, _ := splitSort(sort); return n }

// before is a lex bound just below m: list.lua's "(" + before(m) then
// starts at m itself. Members never end in a zero byte, so m minus its last
// byte, plus that byte less one and 0xff, sorts right below m.
func before(m string) string {
	if m == "" {
		return ""
	}
	last := m[len(m)-1]
	return m[:len(m)-1] + string([]byte{last - 1, 0xff})
}

// listByKey lists the live jobs of a queue holding a key (at most one
// pending and one running).
func (s *Store) listByKey(ctx context.Context, req ocypod.ListRequest) (ocypod.JobPage, error) {
	if req.Queue == "" {
		return ocypod.JobPage{}, ocypod.Invalid("Invalid key: list by key within a queue (GET /queue/{name}/jobs?key=)")
	}
	home, span := s.l.home(req.Queue), s.freshSpan(ctx, req.Queue)
	page := ocypod.JobPage{Jobs: []*ocypod.Job{}}
	for i := range span {
		p := s.l.shard(home, i)
		octx, cancel := s.opContext(ctx)
		pipe := s.rdb.Pipeline()
		held := pipe.HMGet(octx, s.l.key(p, keyJobKeys), keySlot(slotPending, req.Queue, req.Key), keySlot(slotRunning, req.Queue, req.Key))
		drops := pipe.HGetAll(octx, s.l.key(p, keyDrops))
		_, err := pipe.Exec(octx)
		cancel()
		if err != nil {
			return ocypod.JobPage{}, translate(err)
		}
		var found []uint64
		for _, v := range held.Val() {
			sid, ok := v.(string)
			if !ok {
				continue
			}
			var id idStr
			if json.Unmarshal([]byte(sid), &id) != nil {
				continue
			}
			found = append(found, uint64(id))
		}
		// A pending job of a deleted queue may still hold the key here.
		gens := readDropGens([]*redis.MapStringStringCmd{drops})
		if g, ok := gens[0]; ok {
			gens = dropGens{p: g}
		}
		if found, err = s.withoutDropped(ctx, found, gens); err != nil {
			return ocypod.JobPage{}, err
		}
		for _, id := range found {
			j, err := s.GetJob(ctx, id)
			if err != nil {
				if ocypod.ErrorKind(err) == ocypod.KindNotFound {
					continue
				}
				return ocypod.JobPage{}, err
			}
			if req.Status == "" || j.Status == req.Status {
				page.Jobs = append(page.Jobs, j)
			}
		}
	}
	return page, nil
}
