package httpapi

import (
	"net/http"
	"time"

	"github.com/ocyless/ocyless/shared/wire"
)

// queueStats serves GET /queue/{name}/stats[?date=YYYY-MM-DD]: the queue's
// statistics of one UTC day, today by default.
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
	day = time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC)
	st, err := a.store.QueueStats(r.Context(), name, day)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.AppendQueueStats(make([]byte, 0, 1024), st))
	return nil
}
