package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Callbacks (api-v3 §11). The script that ends a job for good with a
// status its callback names records, in the same atomic step, that the
// callback is due (lib.lua, note_callback): a crash between the ending
// and the POST loses nothing. A sender claims due callbacks for a lease
// (DueCallbacks), POSTs each, and records the try (CallbackDone): the
// callback leaves the pending set once delivered or given up.

// CallbackLease is how long a claimed callback is held before it is due
// again: a sender that died mid-POST has it sent again after this.
const CallbackLease = time.Minute

// DueCallback is a callback to send now.
type DueCallback struct {
	JobID    uint64
	Callback ocypod.Sealed
	// Tries is how many tries failed so far; EndedAt is the ending the
	// callback is for (pass it back to CallbackDone).
	Tries   int
	EndedAt time.Time
}

// CallbackTry is the result of one try.
type CallbackTry struct {
	Delivered bool
	// RetryAt is when to try again (not delivered, not given up).
	RetryAt time.Time
	// GiveUp ends the callback without delivery (counted).
	GiveUp bool
}

type dueReply struct {
	Due list[struct {
		ID       idStr  `json:"id"`
		Callback string `json:"callback"`
		Tries    int    `json:"tries"`
		Ended    int64  `json:"ended"`
	}] `json:"due"`
	Next *int64 `json:"next"`
}

// DueCallbacks claims up to limit due callbacks of every partition (one
// pipelined round) for CallbackLease, and returns them with the earliest
// due time of those still pending (zero for none).
func (s *Store) DueCallbacks(ctx context.Context, limit int) ([]DueCallback, time.Time, error) {
	calls := make([]*call, s.l.P)
	outs := make([]any, s.l.P)
	for p := range s.l.P {
		calls[p] = &call{sc: scriptCallbacks, p: p, args: &callbacksArgs{Limit: limit, Lease: CallbackLease.Milliseconds()}}
		outs[p] = new(dueReply)
	}
	_, errs := s.runAll(ctx, calls, outs)
	if err := errors.Join(errs...); err != nil {
		return nil, time.Time{}, fmt.Errorf("redisstore: due callbacks: %w", err)
	}
	var due []DueCallback
	var next int64
	for _, o := range outs {
		r := o.(*dueReply)
		for _, d := range r.Due {
			due = append(due, DueCallback{JobID: uint64(d.ID), Callback: ocypod.Sealed(d.Callback), Tries: d.Tries,
				EndedAt: time.UnixMilli(d.Ended)})
		}
		if r.Next != nil && (next == 0 || *r.Next < next) {
			next = *r.Next
		}
	}
	var at time.Time
	if next > 0 {
		at = time.UnixMilli(next)
	}
	return due, at, nil
}

// CallbackDone records a try of the callback of the job's ending at
// endedAt. A try for an older ending (the job ended again meanwhile) or
// one already delivered changes nothing.
func (s *Store) CallbackDone(ctx context.Context, id uint64, endedAt time.Time, try CallbackTry) error {
	args := &callbackDoneArgs{Ended: endedAt.UnixMilli()}
	switch {
	case try.Delivered:
		args.Delivered = true
	case try.GiveUp:
		args.GiveUp = true
	default:
		at := try.RetryAt.UnixMilli()
		args.RetryAt = &at
	}
	if _, err := s.run(ctx, s.jobCall(scriptCallbackDone, id, args), nil); err != nil {
		return fmt.Errorf("redisstore: callback of job %d: %w", id, err)
	}
	return nil
}

// callbacksArgs is callbacks.lua's argument: claim up to Limit due
// callbacks for Lease ms.
type callbacksArgs struct {
	Limit int   `json:"limit"`
	Lease int64 `json:"lease"`
}

// callbackDoneArgs is callback_done.lua's argument: a try of the callback
// of the job's ending at Ended (ms) was delivered, is given up, or is
// tried again at RetryAt (ms).
type callbackDoneArgs struct {
	jobArg
	Ended     int64  `json:"ended"`
	Delivered bool   `json:"delivered,omitempty"`
	GiveUp    bool   `json:"give_up,omitempty"`
	RetryAt   *int64 `json:"retry_at,omitempty"`
}

// callbackView is the public view of a job's sealed callback and its
// stored state (cbs; nil before any ending it fires for). The secret is
// not read.
func callbackView(sealed ocypod.Sealed, state *string) *ocypod.JobCallback {
	if len(sealed) == 0 {
		return nil
	}
	var cb struct {
		URL string          `json:"url"`
		On  []ocypod.Status `json:"on"`
	}
	_ = json.Unmarshal(sealed, &cb)
	v := &ocypod.JobCallback{URL: cb.URL, On: cb.On}
	if state != nil {
		var st struct {
			A uint64 `json:"a"`
			D int64  `json:"d"`
		}
		_ = json.Unmarshal([]byte(*state), &st)
		v.Attempts = st.A
		if st.D > 0 {
			t := time.UnixMilli(st.D).UTC()
			v.DeliveredAt = &t
		}
	}
	return v
}
