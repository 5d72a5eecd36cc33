package ocypod

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
)

// cronParser reads standard 5-field cron expressions (minute hour
// day-of-month month day-of-week), as crontab(5) and BullMQ/asynq do, plus
// the @hourly/@daily/... descriptors. Schedules are in UTC.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Recurrence is when a schedule fires: a cron expression or a fixed period.
type Recurrence struct {
	cron  cron.Schedule
	every time.Duration
}

// ParseRecurrence checks a schedule's cron expression or period (exactly one
// given) and returns it. A cron expression that never fires (February 30)
// and a period under a second are refused.
func ParseRecurrence(expr string, every Duration) (Recurrence, error) {
	switch {
	case expr != "" && !every.IsZero():
		return Recurrence{}, Invalid("Invalid schedule: give cron or every, not both")
	case expr == "" && every.IsZero():
		return Recurrence{}, Invalid("Invalid schedule: give cron or every")
	case expr != "":
		s, err := cronParser.Parse(expr)
		if err != nil {
			return Recurrence{}, Invalid(fmt.Sprintf("Invalid cron: %v", err))
		}
		r := Recurrence{cron: s}
		// robfig/cron gives up after five years without a match.
		if r.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
			return Recurrence{}, Invalid("Invalid cron: " + expr + " never fires")
		}
		return r, nil
	}
	if every.Secs < 1 {
		return Recurrence{}, Invalid("Invalid every: must be at least 1s")
	}
	return Recurrence{every: every.Std()}, nil
}

// Next is the first firing strictly after t (UTC), zero if none.
func (r Recurrence) Next(t time.Time) time.Time {
	t = t.UTC()
	if r.cron != nil {
		return r.cron.Next(t)
	}
	return t.Add(r.every).Truncate(time.Second)
}

// NextAfter is the first firing after now of a schedule that last fired
// (or was due) at prev: a late run catches up once, not once per missed
// tick. For a period, firings stay on prev's grid.
func (r Recurrence) NextAfter(prev, now time.Time) time.Time {
	if r.cron != nil {
		return r.cron.Next(now.UTC())
	}
	if !prev.Before(now) {
		return prev.Add(r.every)
	}
	n := now.Sub(prev)/r.every + 1
	return prev.Add(n * r.every).UTC()
}
