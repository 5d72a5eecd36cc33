package wire

import (
	"slices"
	"strconv"
	"strings"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// AppendQueueSettings appends GET /queue/{name}'s object: Ocypod's five
// keys (retry_delays always an array), then each extension setting that
// differs from its default, in the order of the extension contract.
func AppendQueueSettings(b []byte, s ocypod.QueueSettings) []byte {
	b = append(b, `{"timeout":`...)
	b = AppendDuration(b, s.Timeout)
	b = append(b, `,"heartbeat_timeout":`...)
	b = AppendDuration(b, s.HeartbeatTimeout)
	b = append(b, `,"expires_after":`...)
	b = AppendDuration(b, s.ExpiresAfter)
	b = append(b, `,"retries":`...)
	b = AppendUint(b, s.Retries)
	b = append(b, `,"retry_delays":`...)
	b = AppendDurations(b, s.RetryDelays)
	if s.Paused {
		b = append(b, `,"paused":true`...)
	}
	if s.Concurrency != 0 {
		b = append(b, `,"concurrency":`...)
		b = AppendUint(b, s.Concurrency)
	}
	if s.RateLimit != nil {
		b = append(b, `,"rate_limit":`...)
		b = AppendRateLimit(b, s.RateLimit)
	}
	if s.RetryBackoff != nil {
		b = append(b, `,"retry_backoff":`...)
		b = AppendBackoff(b, s.RetryBackoff)
	}
	if s.TimeoutRetries != nil {
		b = append(b, `,"timeout_retries":`...)
		b = AppendUint(b, *s.TimeoutRetries)
	}
	if s.DeadLetterQueue != "" {
		b = append(b, `,"dead_letter_queue":`...)
		b = AppendString(b, s.DeadLetterQueue)
	}
	if s.Shards > 1 {
		b = append(b, `,"shards":`...)
		b = AppendUint(b, s.Shards)
	}
	return append(b, '}')
}

// AppendRateLimit appends {"per_second":...,"burst":...}.
func AppendRateLimit(b []byte, rl *ocypod.RateLimit) []byte {
	b = append(b, `{"per_second":`...)
	b = AppendFloat(b, rl.PerSecond)
	b = append(b, `,"burst":`...)
	b = AppendUint(b, rl.Burst)
	return append(b, '}')
}

// AppendInfo appends /info's object, queues sorted by name; a queue's
// scheduled and waiting counts follow Ocypod's six when they are not zero.
func AppendInfo(b []byte, info ocypod.ServerInfo) []byte {
	names := make([]string, 0, len(info.Queues))
	for name := range info.Queues {
		names = append(names, name)
	}
	slices.Sort(names)
	b = append(b, `{"queues":{`...)
	for _, name := range names {
		c := info.Queues[name]
		b = AppendKey(b, name)
		b = append(b, `{"queued":`...)
		b = AppendUint(b, c.Queued)
		b = append(b, `,"running":`...)
		b = AppendUint(b, c.Running)
		b = append(b, `,"failed":`...)
		b = AppendUint(b, c.Failed)
		b = append(b, `,"completed":`...)
		b = AppendUint(b, c.Completed)
		b = append(b, `,"cancelled":`...)
		b = AppendUint(b, c.Cancelled)
		b = append(b, `,"timed_out":`...)
		b = AppendUint(b, c.TimedOut)
		if c.Scheduled != 0 {
			b = append(b, `,"scheduled":`...)
			b = AppendUint(b, c.Scheduled)
		}
		if c.Waiting != 0 {
			b = append(b, `,"waiting":`...)
			b = AppendUint(b, c.Waiting)
		}
		b = append(b, '}')
	}
	s := info.Statistics
	b = append(b, `},"statistics":{"total_jobs_created":`...)
	b = AppendUint(b, s.Created)
	b = append(b, `,"total_jobs_completed":`...)
	b = AppendUint(b, s.Completed)
	b = append(b, `,"total_jobs_retried":`...)
	b = AppendUint(b, s.Retried)
	b = append(b, `,"total_jobs_failed":`...)
	b = AppendUint(b, s.Failed)
	b = append(b, `,"total_jobs_timed_out":`...)
	b = AppendUint(b, s.TimedOut)
	b = append(b, `,"total_jobs_cancelled":`...)
	b = AppendUint(b, s.Cancelled)
	return append(b, "}}"...)
}

// AppendJobIDs appends /queue/{name}/job_ids's object: Ocypod's six
// statuses, each an array (never null), then scheduled and waiting when
// they are not empty.
func AppendJobIDs(b []byte, ids ocypod.JobIDs) []byte {
	b = append(b, `{"queued":`...)
	b = AppendIDs(b, ids.Queued)
	b = append(b, `,"running":`...)
	b = AppendIDs(b, ids.Running)
	b = append(b, `,"failed":`...)
	b = AppendIDs(b, ids.Failed)
	b = append(b, `,"completed":`...)
	b = AppendIDs(b, ids.Completed)
	b = append(b, `,"cancelled":`...)
	b = AppendIDs(b, ids.Cancelled)
	b = append(b, `,"timed_out":`...)
	b = AppendIDs(b, ids.TimedOut)
	if len(ids.Scheduled) > 0 {
		b = append(b, `,"scheduled":`...)
		b = AppendIDs(b, ids.Scheduled)
	}
	if len(ids.Waiting) > 0 {
		b = append(b, `,"waiting":`...)
		b = AppendIDs(b, ids.Waiting)
	}
	return append(b, '}')
}

// AppendNextJob appends Ocypod's take answer, {"id":..,"input":..}.
func AppendNextJob(b []byte, j *ocypod.NextJob) []byte {
	b = append(b, `{"id":`...)
	b = AppendUint(b, j.ID)
	b = append(b, `,"input":`...)
	b = AppendRaw(b, j.Input)
	return append(b, '}')
}

// AppendTake appends an extended take object, {"id","input","attempt",
// "queue"}.
func AppendTake(b []byte, j *ocypod.NextJob) []byte {
	b = append(b, `{"id":`...)
	b = AppendUint(b, j.ID)
	b = append(b, `,"input":`...)
	b = AppendRaw(b, j.Input)
	b = append(b, `,"attempt":`...)
	b = AppendUint(b, j.Attempt)
	b = append(b, `,"queue":`...)
	b = AppendString(b, j.Queue)
	return append(b, '}')
}

// AppendTakes appends an array of take objects.
func AppendTakes(b []byte, jobs []ocypod.NextJob) []byte {
	b = append(b, '[')
	for i := range jobs {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendTake(b, &jobs[i])
	}
	return append(b, ']')
}

// AppendJobs appends an array of jobs, each with fields (nil: each job's
// DefaultJobFields).
func AppendJobs(b []byte, jobs []*ocypod.Job, fields []string) []byte {
	b = append(b, '[')
	for i, j := range jobs {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendJob(b, j, fields)
	}
	return append(b, ']')
}

// appendCursor appends a page's next_cursor: a string, or null on the
// last page.
func appendCursor(b []byte, cursor string) []byte {
	b = append(b, `,"next_cursor":`...)
	return appendOptString(b, cursor)
}

// AppendJobPage appends a listing page, {"jobs":[...],"next_cursor":...}.
func AppendJobPage(b []byte, p ocypod.JobPage, fields []string) []byte {
	b = append(b, `{"jobs":`...)
	b = AppendJobs(b, p.Jobs, fields)
	b = appendCursor(b, p.NextCursor)
	return append(b, '}')
}

// AppendFailurePage appends one page of a failure group, {"total","jobs",
// "next_cursor"}. Without fields, each job shows its default fields and
// its error.
func AppendFailurePage(b []byte, p ocypod.FailurePage, fields []string) []byte {
	b = append(b, `{"total":`...)
	b = AppendUint(b, p.Total)
	b = append(b, `,"jobs":[`...)
	for i, j := range p.Jobs {
		if i > 0 {
			b = append(b, ',')
		}
		fs := fields
		if fs == nil {
			if fs = DefaultJobFields(j); !slices.Contains(fs, "error") {
				fs = append(slices.Clip(fs), "error")
			}
		}
		b = AppendJob(b, j, fs)
	}
	b = append(b, ']')
	b = appendCursor(b, p.NextCursor)
	return append(b, '}')
}

// AppendCounts appends {"<name>": count, ...}, names sorted.
func AppendCounts(b []byte, counts map[string]uint64) []byte {
	names := make([]string, 0, len(counts))
	for name := range counts {
		names = append(names, name)
	}
	slices.Sort(names)
	b = append(b, '{')
	for _, name := range names {
		b = AppendKey(b, name)
		b = AppendUint(b, counts[name])
	}
	return append(b, '}')
}

// AppendWorkers appends GET /workers's array.
func AppendWorkers(b []byte, ws []ocypod.Worker) []byte {
	b = append(b, '[')
	for i, w := range ws {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = AppendString(b, w.Name)
		b = append(b, `,"last_seen":`...)
		b = AppendTime(b, &w.LastSeen)
		b = append(b, `,"running":`...)
		b = AppendUint(b, w.Running)
		b = append(b, `,"timed_out":`...)
		b = AppendUint(b, w.TimedOut)
		b = append(b, '}')
	}
	return append(b, ']')
}

// AppendWorkerJobs appends GET /workers/{name}'s object.
func AppendWorkerJobs(b []byte, wj ocypod.WorkerJobs) []byte {
	b = append(b, `{"running":`...)
	b = AppendIDs(b, wj.Running)
	b = append(b, `,"timed_out":`...)
	b = AppendIDs(b, wj.TimedOut)
	return append(b, '}')
}

// AppendQueueStats appends GET /queue/{name}/stats's object.
func AppendQueueStats(b []byte, s ocypod.QueueStats) []byte {
	b = append(b, `{"created":`...)
	b = AppendUint(b, s.Created)
	b = append(b, `,"completed":`...)
	b = AppendUint(b, s.Completed)
	b = append(b, `,"failed":`...)
	b = AppendUint(b, s.Failed)
	b = append(b, `,"retries":`...)
	b = AppendUint(b, s.Retries)
	b = append(b, `,"wait":`...)
	b = appendDurationStats(b, &s.Wait)
	b = append(b, `,"run":`...)
	b = appendDurationStats(b, &s.Run)
	return append(b, '}')
}

// AppendQueueStatsMinutes is AppendQueueStats with the last hour's
// per-minute counts (GET /queue/{name}/stats?by=minute): "minutes":
// {"start","created","completed","failed"}, each list oldest first.
func AppendQueueStatsMinutes(b []byte, s ocypod.QueueStats, m *ocypod.MinuteStats) []byte {
	b = AppendQueueStats(b, s)
	b = append(b[:len(b)-1], `,"minutes":{"start":`...)
	b = AppendTime(b, &m.Start)
	for _, l := range []struct {
		name string
		n    *[ocypod.MinuteCount]uint64
	}{{"created", &m.Created}, {"completed", &m.Completed}, {"failed", &m.Failed}} {
		b = append(b, `,"`...)
		b = append(b, l.name...)
		b = append(b, `":`...)
		b = AppendIDs(b, l.n[:])
	}
	return append(b, "}}"...)
}

func appendDurationStats(b []byte, s *ocypod.DurationStats) []byte {
	b = append(b, `{"count":`...)
	b = AppendUint(b, s.Count)
	b = append(b, `,"mean":`...)
	b = AppendFloat(b, s.Mean)
	b = append(b, `,"variance":`...)
	b = AppendFloat(b, s.Variance)
	b = append(b, `,"histogram":`...)
	b = AppendIDs(b, s.Histogram[:])
	return append(b, '}')
}

// AppendSchedule appends a schedule: {"id","queue","cron" or "every",
// "job","next_run"}.
func AppendSchedule(b []byte, s *ocypod.Schedule) []byte {
	b = append(b, `{"id":`...)
	b = AppendString(b, s.ID)
	b = append(b, `,"queue":`...)
	b = AppendString(b, s.Queue)
	if s.Cron != "" {
		b = append(b, `,"cron":`...)
		b = AppendString(b, s.Cron)
	} else {
		b = append(b, `,"every":`...)
		b = AppendDuration(b, s.Every)
	}
	b = append(b, `,"job":`...)
	b = AppendRaw(b, s.Job)
	b = append(b, `,"next_run":`...)
	if s.NextRun.IsZero() {
		b = append(b, "null"...)
	} else {
		b = AppendTime(b, &s.NextRun)
	}
	return append(b, '}')
}

// AppendSchedules appends an array of schedules, sorted by id.
func AppendSchedules(b []byte, ss []ocypod.Schedule) []byte {
	idx := make([]int, len(ss))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(x, y int) int { return strings.Compare(ss[x].ID, ss[y].ID) })
	b = append(b, '[')
	for n, i := range idx {
		if n > 0 {
			b = append(b, ',')
		}
		b = AppendSchedule(b, &ss[i])
	}
	return append(b, ']')
}

// AppendRetryResult appends POST /job/{id}/retry's answer.
func AppendRetryResult(b []byte, r ocypod.RetryResult) []byte {
	b = append(b, `{"status":`...)
	b = AppendString(b, string(r.Status))
	b = append(b, `,"retries_attempted":`...)
	b = AppendUint(b, r.RetriesAttempted)
	return append(b, '}')
}

// AppendRetried appends POST /failures/{group}/retry's answer.
func AppendRetried(b []byte, n int) []byte {
	b = append(b, `{"retried":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '}')
}
