package httpapi

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/wire"
)

// Path values and query parameters. A query parameter given twice is
// serde's 400 "duplicate field"; a list value (fields=, queues=) names each
// item once, however often it is repeated.

// jobID parses the {id} path value (404 with Ocypod's text if it is not a
// u64).
func jobID(r *http.Request) (uint64, error) { return wire.ParseU64(r.PathValue("id")) }

// queueName returns the {name} path value if it is a valid queue name. It is
// checked before Redis is touched (upstream checked it after acquiring a
// connection, so a bad name gave 503 while Redis was down).
func queueName(r *http.Request) (string, error) {
	name := r.PathValue("name")
	if !ocypod.ValidQueueName(name) {
		return "", ocypod.InvalidQueueName()
	}
	return name, nil
}

// query returns r's query, or the zero Query when there is none.
func query(r *http.Request) wire.Query { return wire.ParseQuery(r.URL.RawQuery) }

// parseFields reads the optional "fields" parameter: nil when absent,
// otherwise its comma-separated names, each one of ocypod.JobFields or
// ocypod.ExtJobFields and each once. Ocypod's query parser refused a
// repeated key before the names were looked at.
func parseFields(q wire.Query) ([]string, error) {
	value, ok, err := q.Get("fields")
	if err != nil || !ok {
		return nil, err
	}
	fields := wire.List(value)
	for _, f := range fields {
		if !slices.Contains(ocypod.JobFields, f) && !slices.Contains(ocypod.ExtJobFields, f) {
			return nil, wire.UnrecognisedField(f)
		}
	}
	return fields, nil
}

// intParam reads an optional integer parameter from lo to hi (def when
// absent): decimal digits only.
func intParam(q wire.Query, key string, lo, hi, def int) (int, error) {
	s, ok, err := q.Get(key)
	if err != nil || !ok {
		return def, err
	}
	n, ok := decimal(s)
	if !ok || n < uint64(lo) || n > uint64(hi) {
		return 0, invalid(key, fmt.Sprintf("must be an integer from %d to %d", lo, hi))
	}
	return int(n), nil
}

// decimal parses 1 to 19 decimal digits.
func decimal(s string) (uint64, bool) {
	if s == "" || len(s) > 19 {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + uint64(s[i]-'0')
	}
	return n, true
}

// attemptParam reads ?attempt=<n>, the fencing of heartbeat, output and
// PATCH: nil when absent.
func attemptParam(q wire.Query) (*uint64, error) {
	s, ok, err := q.Get("attempt")
	if err != nil || !ok {
		return nil, err
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || s[0] == '+' {
		return nil, invalid("attempt", "must be a non-negative integer")
	}
	return &n, nil
}

// nameParam reads an optional parameter of 1 to max printable characters.
func nameParam(q wire.Query, key string, max int) (string, bool, error) {
	s, ok, err := q.Get(key)
	if err != nil || !ok {
		return "", false, err
	}
	if !printable(s, max) {
		return "", false, invalid(key, fmt.Sprintf("must be 1 to %d printable characters", max))
	}
	return s, true, nil
}

// takeParams are the take parameters of GET /queue/{name}/job, GET /job
// and PATCH /job/{id}?take=.
type takeParams struct {
	req ocypod.TakeRequest
	// count and worker are set when the parameter was given: the answer
	// is then an extended take object (an array of them with count).
	count, worker, wait bool
	// why is set by the store when a limit held queued jobs back
	// (TakeRequest.Why): the 204's Ocyless-Empty-Reason.
	why string
}

// parseTake reads wait (at most ocypod.MaxWait), count (1 to
// ocypod.MaxTakeCount) and worker (1 to ocypod.MaxWorkerName printable).
func parseTake(q wire.Query, queues []string) (takeParams, error) {
	t := takeParams{req: ocypod.TakeRequest{Queues: queues, Count: 1}}
	var err error
	if t.req.Count, err = intParam(q, "count", 1, ocypod.MaxTakeCount, 0); err != nil {
		return t, err
	}
	t.count = t.req.Count > 0
	t.req.Count = max(t.req.Count, 1)
	if t.req.Worker, t.worker, err = nameParam(q, "worker", ocypod.MaxWorkerName); err != nil {
		return t, err
	}
	if t.req.Wait, t.wait, err = waitParam(q); err != nil {
		return t, err
	}
	return t, nil
}

// waitParam reads ?wait=, a duration of at most ocypod.MaxWait; ok tells
// whether it was given.
func waitParam(q wire.Query) (d time.Duration, ok bool, err error) {
	s, ok, err := q.Get("wait")
	if err != nil || !ok {
		return 0, false, err
	}
	v, err := parseDurationValue(s, "wait")
	if err != nil {
		return 0, false, err
	}
	if v.Secs > uint64(ocypod.MaxWait/time.Second) || v.Std() > ocypod.MaxWait {
		return 0, false, invalid("wait", "must be at most "+ocypod.FromStd(ocypod.MaxWait).String())
	}
	return v.Std(), true, nil
}

// maxTakeQueues bounds the queues of one GET /job.
const maxTakeQueues = 100

// queuesParam reads ?queues=a,b,c: at least one queue, each valid and
// counted once, at most maxTakeQueues of them.
func queuesParam(q wire.Query) ([]string, error) {
	s, ok, err := q.Get("queues")
	if err != nil {
		return nil, err
	}
	if !ok || s == "" {
		return nil, invalid("queues", "give at least one queue")
	}
	queues := wire.List(s)
	if len(queues) > maxTakeQueues {
		return nil, invalid("queues", fmt.Sprintf("at most %d queues", maxTakeQueues))
	}
	for _, name := range queues {
		if !ocypod.ValidQueueName(name) {
			return nil, ocypod.InvalidQueueName()
		}
	}
	return queues, nil
}
