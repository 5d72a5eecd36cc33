package redisstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/config"
	"github.com/ocyless/ocyless/shared/ocypod"
)

var scriptImport = loadScript("import.lua", importQueueArgs{}, importCountersArgs{}, importJobsArgs{})

// defaultImportBatch is how many jobs one import step reads and writes.
const defaultImportBatch = 500

// maxListedSkips bounds ImportReport.Skipped.
const maxListedSkips = 100

// ImportOptions describe the upstream Ocypod 0.8 database Import copies.
type ImportOptions struct {
	// Source is a client of the upstream database's Redis (a single node,
	// as Ocypod used). Import adds a hook to it that refuses every command
	// but reads, before it is sent.
	Source redis.UniversalClient
	// SourceNamespace is upstream's redis.key_namespace ("" for none).
	SourceNamespace string
	// SourceName identifies the source in messages and in the progress
	// record (an unfinished import continues only from the same source):
	// its URL without credentials, say.
	SourceName string
	// DryRun reads and checks everything, reports what would be copied,
	// and writes nothing.
	DryRun bool
	// BatchSize is how many jobs one step copies (one script per partition
	// holding some of them); 0 means 500.
	BatchSize int
	// MaxValueSize is the API's request body limit (server.max_body_size;
	// 0 means config.DefaultMaxBodySize): a job whose input or output is
	// larger could not have been created through the API, and is skipped
	// with a report line, as a job whose tags the API refuses.
	MaxValueSize int64
	// Progress, when set, is called after each step with the number of the
	// source's jobs handled so far (copied, found copied, or skipped) and
	// their total.
	Progress func(done, total int)
}

// ImportReport says what Import did.
type ImportReport struct {
	// Source is ImportOptions.SourceName, with the source namespace.
	Source     string
	Namespace  string // the target's
	Partitions int
	DryRun     bool
	// NothingToDo is set when an earlier run finished this import (Finished
	// says when); nothing else is filled in.
	NothingToDo bool
	Finished    string
	// Resumed is set when this run continued an interrupted one, after the
	// source's job ResumedAfter.
	Resumed      bool
	ResumedAfter uint64
	// Queues are the source's queues, all copied with their settings.
	Queues []string
	// Jobs counts the jobs this run copied (or would copy), per queue and
	// status as Ocypod reported them.
	Jobs map[string]map[ocypod.Status]uint64
	// Copied is their total; Present counts jobs found already copied by
	// an interrupted run (left as they are).
	Copied, Present int
	// Skipped are jobs that cannot be copied (corrupt or partial hashes,
	// such as the stubs Ocypod's take race leaves), the first
	// maxListedSkips of them; SkippedTotal counts them all.
	Skipped      []ImportSkip
	SkippedTotal int
	// Statistics are Ocypod's six counters as set here (nil when the
	// source had none, or a resumed run had set them already).
	Statistics *ocypod.Statistics
	// LastID is the source's job id counter: new jobs get higher ids.
	LastID uint64
}

// ImportSkip is a source job Import did not copy, and why.
type ImportSkip struct {
	ID     uint64
	Reason string
}

// Import copies an upstream Ocypod 0.8 database (its key layout:
// queues and their settings, jobs in every status with their timestamps,
// input, output, tags and retry state, the order of queued jobs, the
// running, failed and ended bookkeeping, the statistics and the id
// counter) into this store's namespace. Job ids stay as they are: with
// several partitions each job goes to the partition its id names, and a
// queue whose jobs land beyond its home partition spans those partitions
// (as a sharded queue does), so its takes reach them.
//
// The source is only read (see ImportOptions.Source). The target must be
// empty, or hold an unfinished import of the same source, which then
// continues where it stopped: jobs go in ascending id order, a few hundred
// per step, and the progress is recorded after each; a job already in the
// target is never written twice. A finished import reports NothingToDo.
// A source that is not an Ocypod database and a target that is not empty
// are refused (an *ImportRefusal) before anything is written.
func (s *Store) Import(ctx context.Context, o ImportOptions) (*ImportReport, error) {
	rep := &ImportReport{Namespace: s.l.ns, Partitions: s.l.P, DryRun: o.DryRun,
		Jobs: map[string]map[ocypod.Status]uint64{}}
	fail := func(err error) (*ImportReport, error) {
		var r *ImportRefusal
		switch {
		case errors.As(err, &r):
			return rep, err
		case ctx.Err() != nil:
			return rep, fmt.Errorf("import interrupted (run it again to continue): %w", context.Cause(ctx))
		}
		return rep, fmt.Errorf("redisstore: import: %w", err)
	}
	if o.Source == nil {
		return fail(errors.New("no source client"))
	}
	o.Source.AddHook(readOnlyGuard{})
	where := o.SourceName
	if o.SourceNamespace != "" {
		where += fmt.Sprintf(" (namespace %q)", o.SourceNamespace)
	}
	rep.Source = where
	u, err := surveyUpstream(ctx, o.Source, o.SourceNamespace, where)
	if err != nil {
		return fail(err)
	}
	u.maxValue = cmp.Or(o.MaxValueSize, config.DefaultMaxBodySize)
	rep.LastID = u.lastID
	for _, q := range u.queues {
		rep.Queues = append(rep.Queues, q.name)
	}
	t, err := s.checkTarget(ctx, where)
	if err != nil {
		return fail(err)
	}
	if t.done {
		rep.NothingToDo, rep.Finished = true, t.finished
		return rep, nil
	}
	rep.Resumed, rep.ResumedAfter = t.resume, t.through
	if !o.DryRun {
		if !t.resume {
			if err := s.beginImport(ctx, where); err != nil {
				return fail(err)
			}
		}
		// Counters first: a job created here meanwhile cannot take a
		// source job's id.
		if err := s.importCounters(ctx, u, !t.counted); err != nil {
			return fail(err)
		}
		if !t.counted {
			if err := s.markImport(ctx, impCounted, "1"); err != nil {
				return fail(err)
			}
			if u.hasStats {
				st := statisticsOf(u.totals)
				rep.Statistics = &st
			}
		}
	}
	spans, err := s.importQueues(ctx, u, o.DryRun)
	if err != nil {
		return fail(err)
	}
	if err := s.importJobs(ctx, u, o, t.through, spans, rep); err != nil {
		return fail(err)
	}
	if o.DryRun {
		if u.hasStats {
			st := statisticsOf(u.totals)
			rep.Statistics = &st
		}
		return rep, nil
	}
	if err := s.markImport(ctx, impState, importDone, impFinished, s.now().UTC().Format(time.RFC3339)); err != nil {
		return fail(err)
	}
	return rep, nil
}

func statisticsOf(t map[string]uint64) ocypod.Statistics {
	return ocypod.Statistics{Created: t["created"], Completed: t["completed"], Retried: t["retried"],
		Failed: t["failed"], TimedOut: t["timed_out"], Cancelled: t["cancelled"]}
}

// importQueues creates the source's queues (spanning one partition at
// first) and returns each queue's span.
func (s *Store) importQueues(ctx context.Context, u *upstream, dryRun bool) (map[string]int, error) {
	spans := map[string]int{}
	for _, q := range u.queues {
		spans[q.name] = 1
		if dryRun {
			continue
		}
		span, err := s.importQueue(context.WithoutCancel(ctx), q, 1)
		if err != nil {
			return nil, fmt.Errorf("queue %q: %w", q.name, err)
		}
		spans[q.name] = span
	}
	return spans, nil
}

// importJobs copies the source's jobs above through, a batch at a time.
func (s *Store) importJobs(ctx context.Context, u *upstream, o ImportOptions, through uint64, spans map[string]int, rep *ImportReport) error {
	batch := o.BatchSize
	if batch <= 0 {
		batch = defaultImportBatch
	}
	queues := map[string]upstreamQueue{}
	for _, q := range u.queues {
		queues[q.name] = q
	}
	first, _ := slices.BinarySearch(u.ids, through+1)
	done := first
	for chunk := range slices.Chunk(u.ids[first:], batch) {
		if err := ctx.Err(); err != nil {
			return err
		}
		recs, err := s.readJobs(ctx, u, o.Source, chunk, rep)
		if err != nil {
			return err
		}
		if !o.DryRun {
			// A step is written whole once its jobs are read: cancelling
			// stops the import between steps.
			wctx := context.WithoutCancel(ctx)
			if err := s.widenSpans(wctx, recs, queues, spans); err != nil {
				return err
			}
			if recs, err = s.writeJobs(wctx, recs, rep); err != nil {
				return err
			}
			if err := s.markImport(wctx, impThrough, chunk[len(chunk)-1]); err != nil {
				return err
			}
		}
		for _, r := range recs {
			byStatus := rep.Jobs[r.Queue]
			if byStatus == nil {
				byStatus = map[ocypod.Status]uint64{}
				rep.Jobs[r.Queue] = byStatus
			}
			byStatus[ocypod.Status(r.Status)]++
			rep.Copied++
		}
		done += len(chunk)
		if o.Progress != nil {
			o.Progress(done, len(u.ids))
		}
	}
	return nil
}

// readJobs reads and converts the source jobs ids (one pipelined round);
// those that cannot be copied go to the report.
func (s *Store) readJobs(ctx context.Context, u *upstream, src redis.UniversalClient, ids []uint64, rep *ImportReport) ([]*importRecord, error) {
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	_, err := src.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGetAll(ctx, u.pre+"job:"+strconv.FormatUint(id, 10))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the source: %w", err)
	}
	recs := make([]*importRecord, 0, len(ids))
	for i, id := range ids {
		r, err := u.upstreamJob(id, cmds[i].Val())
		switch {
		case err != nil:
			rep.SkippedTotal++
			if len(rep.Skipped) < maxListedSkips {
				rep.Skipped = append(rep.Skipped, ImportSkip{ID: id, Reason: err.Error()})
			}
		case r != nil:
			recs = append(recs, r)
		}
	}
	return recs, nil
}

// widenSpans makes every registered queue span the partitions of its
// records (settings there, takes reaching them) before they are written.
func (s *Store) widenSpans(ctx context.Context, recs []*importRecord, queues map[string]upstreamQueue, spans map[string]int) error {
	if s.l.P == 1 {
		return nil
	}
	need := map[string]int{}
	for _, r := range recs {
		q, ok := queues[r.Queue]
		if !ok {
			continue // a deleted queue: no settings to copy
		}
		id, _ := strconv.ParseUint(r.ID, 10, 64)
		i := s.l.shardIndex(s.l.home(q.name), s.l.partitionOf(id))
		need[r.Queue] = max(need[r.Queue], i+1)
	}
	for _, name := range slices.Sorted(maps.Keys(need)) {
		if need[name] <= spans[name] {
			continue
		}
		span, err := s.importQueue(ctx, queues[name], need[name])
		if err != nil {
			return fmt.Errorf("queue %q: %w", name, err)
		}
		spans[name] = span
	}
	return nil
}

// writeJobs writes records, one script per partition (one pipelined
// round), and returns those that were written here now.
func (s *Store) writeJobs(ctx context.Context, recs []*importRecord, rep *ImportReport) ([]*importRecord, error) {
	byPart := map[int][]*importRecord{}
	var parts []int
	byID := map[string]*importRecord{}
	for _, r := range recs {
		id, _ := strconv.ParseUint(r.ID, 10, 64)
		p := s.l.partitionOf(id)
		if _, ok := byPart[p]; !ok {
			parts = append(parts, p)
		}
		byPart[p] = append(byPart[p], r)
		byID[r.ID] = r
	}
	type written struct {
		Copied  list[idStr] `json:"copied"`
		Present int         `json:"present"`
	}
	calls := make([]*call, len(parts))
	outs := make([]any, len(parts))
	for i, p := range parts {
		calls[i] = &call{sc: scriptImport, p: p, args: &importJobsArgs{Op: "jobs", Jobs: byPart[p]}}
		outs[i] = new(written)
	}
	replies, errs := s.runAll(ctx, calls, outs)
	var out []*importRecord
	for i := range parts {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if replies[i].Err != "" {
			return nil, errors.New("import.lua: " + replies[i].Err)
		}
		w := outs[i].(*written)
		rep.Present += w.Present
		for _, id := range w.Copied {
			out = append(out, byID[strconv.FormatUint(uint64(id), 10)])
		}
	}
	return out, nil
}
