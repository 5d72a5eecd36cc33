package redisstore

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// listSource is one lex range list.lua walks.
type listSource struct {
	Index string `json:"index,omitempty"`
	Lo    string `json:"lo,omitempty"`
	Hi    string `json:"hi,omitempty"`
	Walk  string `json:"walk,omitempty"` // a status code over every queue
}

// partCursor is where a partition's listing stands: source I, after
// member M.
type partCursor struct {
	I int    `json:"i"`
	M string `json:"m,omitempty"`
}

// cursor is a listing's position in every partition it covers (nil: that
// partition is done), bound to the query it belongs to.
type cursor struct {
	Query string        `json:"q"`
	Parts []*partCursor `json:"p"`
}

// cursorKey signs cursors: not a secret, a check that a cursor is one the
// store wrote for this namespace, so a tampered one is refused.
func (s *Store) cursorKey() []byte { return []byte("ocyless cursor " + s.l.ns) }

func (s *Store) encodeCursor(c cursor) string {
	b, _ := json.Marshal(c)
	mac := hmac.New(sha256.New, s.cursorKey())
	mac.Write(b)
	return base64.RawURLEncoding.EncodeToString(b) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:8])
}

func (s *Store) decodeCursor(text, query string, parts int) (cursor, error) {
	bad := func(why string) (cursor, error) { return cursor{}, ocypod.Invalid("Invalid cursor: " + why) }
	body, sig, ok := strings.Cut(text, ".")
	if !ok {
		return bad("not a cursor of this server")
	}
	b, err1 := base64.RawURLEncoding.DecodeString(body)
	want, err2 := base64.RawURLEncoding.DecodeString(sig)
	if err1 != nil || err2 != nil {
		return bad("not a cursor of this server")
	}
	mac := hmac.New(sha256.New, s.cursorKey())
	mac.Write(b)
	if !hmac.Equal(mac.Sum(nil)[:8], want) {
		return bad("it was altered")
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil || len(c.Parts) != parts {
		return bad("not a cursor of this server")
	}
	if c.Query != query {
		return bad("it belongs to another query")
	}
	return c, nil
}

// partsFor is what a page must read for fields (nil: the default fields).
func partsFor(fields []string) []string {
	if fields == nil {
		return []string{"input", "output", "error"}
	}
	var parts []string
	for _, f := range fields {
		switch f {
		case "input", "output", "error", "history", "dependents":
			if !slices.Contains(parts, f) {
				parts = append(parts, f)
			}
		}
	}
	return stringList(parts)
}

// ListJobs returns one page of jobs of queue req.Queue (or of every queue)
// matching the filters, in a stable order: by id, except queued jobs of
// one queue, which come in take order; without a status filter a queue's
// jobs come status by status. A page costs O(limit + log n) per partition
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
	args := map[string]any{"limit": limit, "scan": max(limit*4, 200), "parts": partsFor(req.Fields)}
	var sources []listSource
	q := req.Queue
	switch {
	case req.HasTag:
		lo, hi := lexRange(escLex(req.Tag))
		sources = []listSource{{Index: "tag", Lo: lo, Hi: hi}}
		setFilter(args, "queue", q)
		setFilter(args, "status", string(req.Status))
		setFilter(args, "worker", req.Worker)
	case req.Worker != "":
		for _, c := range []string{"r", "t"} {
			if code == "" || code == c {
				lo, hi := lexRange(escLex(req.Worker) + " " + c)
				sources = append(sources, listSource{Index: "wk", Lo: lo, Hi: hi})
			}
		}
		setFilter(args, "queue", q)
	case req.Tracked != nil && *req.Tracked:
		lo, hi := "-", "+"
		if q != "" {
			lo, hi = lexRange(q)
		}
		sources = []listSource{{Index: "trk", Lo: lo, Hi: hi}}
		setFilter(args, "status", string(req.Status))
	case code != "" && q == "":
		sources = []listSource{{Walk: code}}
	case code != "":
		lo, hi := lexRange(q + " " + code)
		sources = []listSource{{Index: "idx", Lo: lo, Hi: hi}}
	case q != "":
		for _, st := range []string{"q", "s", "w", "r", "f", "t", "c", "x"} {
			lo, hi := lexRange(q + " " + st)
			sources = append(sources, listSource{Index: "idx", Lo: lo, Hi: hi})
		}
	default:
		sources = []listSource{{Index: "idx", Lo: "-", Hi: "+"}}
	}
	if req.Tracked != nil && !*req.Tracked {
		args["tracked"] = false
	}
	args["sources"] = sources
	page, err := s.listPage(ctx, req, args)
	if err != nil {
		return fail(err)
	}
	return page, nil
}

func setFilter(args map[string]any, name, v string) {
	if v != "" {
		args[name] = v
	}
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
func (s *Store) listPage(ctx context.Context, req ocypod.ListRequest, args map[string]any) (ocypod.JobPage, error) {
	page, _, err := s.listPageTotal(ctx, req, args)
	return page, err
}

// listPageTotal is listPage, plus the sum of the partitions' totals (a
// failure group's size, with args count_group).
func (s *Store) listPageTotal(ctx context.Context, req ocypod.ListRequest, args map[string]any) (ocypod.JobPage, uint64, error) {
	parts := s.listPartitions(ctx, req.Queue)
	query, _ := json.Marshal([]any{req.Queue, req.Status, req.HasTag, req.Tag, req.Worker, req.Tracked, args["sources"]})
	cur := cursor{Query: string(query), Parts: make([]*partCursor, len(parts))}
	for i := range cur.Parts {
		cur.Parts[i] = &partCursor{I: 1}
	}
	if req.Cursor != "" {
		var err error
		if cur, err = s.decodeCursor(req.Cursor, string(query), len(parts)); err != nil {
			return ocypod.JobPage{}, 0, err
		}
	}
	type listed struct {
		ID         idStr   `json:"id"`
		Sort       string  `json:"sort"`
		Meta       string  `json:"meta"`
		Input      *string `json:"input"`
		Output     *string `json:"output"`
		Error      *string `json:"error"`
		History    *string `json:"history"`
		Dependents *string `json:"dependents"`
		part       int
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
		_, counting := args["count_group"]
		if cur.Parts[i] == nil && !counting {
			continue
		}
		a := map[string]any{}
		for k, v := range args {
			a[k] = v
		}
		if cur.Parts[i] == nil {
			a["done"] = true
		}
		if cur.Parts[i] != nil && (cur.Parts[i].M != "" || cur.Parts[i].I > 1) {
			a["after"] = cur.Parts[i]
		}
		if req.Queue != "" && p == s.l.home(req.Queue) {
			// The queue's home answers queue_not_found in the same round.
			a["must_exist"] = req.Queue
		}
		calls = append(calls, &call{sc: scriptList, p: p, args: a})
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
	limit := cmp.Or(req.Limit, ocypod.DefaultListLimit)
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
		if l.Dependents != nil {
			var ds list[idStr]
			_ = json.Unmarshal([]byte(*l.Dependents), &ds)
			j.Dependents = ids(ds)
		}
		page.Jobs = append(page.Jobs, j)
	}
	if slices.ContainsFunc(cur.Parts, func(c *partCursor) bool { return c != nil }) {
		page.NextCursor = s.encodeCursor(cur)
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
		vals, err := s.rdb.HMGet(octx, s.l.key(p, "keys"), "p "+req.Queue+" "+req.Key, "r "+req.Queue+" "+req.Key).Result()
		cancel()
		if err != nil {
			return ocypod.JobPage{}, translate(err)
		}
		for _, v := range vals {
			sid, ok := v.(string)
			if !ok {
				continue
			}
			var id idStr
			if json.Unmarshal([]byte(sid), &id) != nil {
				continue
			}
			j, err := s.GetJob(ctx, uint64(id))
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
