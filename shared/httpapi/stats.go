package httpapi

import (
	"net/http"
	"time"

	"github.com/ocyless/ocyless/shared/wire"
)

// queueStats serves GET /queue/{name}/stats[?date=YYYY-MM-DD | ?by=minute]:
// the queue's statistics of one UTC day, today by default; by=minute adds
// the last hour's counts minute by minute.
func (a *API) queueStats(w http.ResponseWriter, r *http.Request) error {
	name, err := queueName(r)
	if err != nil {
		return err
	}
	day := a.opts.Now().UTC()
	s, ok, err := query(r).Get("date")
	if err != nil {
		return err
	}
	if ok {
		if day, err = time.Parse(time.DateOnly, s); err != nil || len(s) != len(time.DateOnly) {
			return invalid("date", "must be a day as YYYY-MM-DD")
		}
	}
	by, byMinute, err := query(r).Get("by")
	if err != nil {
		return err
	}
	if byMinute && by != "minute" {
		return invalid("by", "must be minute")
	}
	if byMinute && ok {
		return invalid("by", "the last hour's minutes come with today's statistics, without date")
	}
	now := day
	day = time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC)
	st, err := a.store.QueueStats(r.Context(), name, day)
	if err != nil {
		return err
	}
	if !byMinute {
		writeJSON(w, http.StatusOK, wire.AppendQueueStats(make([]byte, 0, 1024), st))
		return nil
	}
	m, err := a.store.QueueMinutes(r.Context(), name, now)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.AppendQueueStatsMinutes(make([]byte, 0, 3072), st, &m))
	return nil
}
