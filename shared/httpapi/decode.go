package httpapi

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/wire"
)

// jsonDoc is a parsed request body; src positions its errors.
type jsonDoc struct {
	src  []byte
	root wire.Value
}

// readJSON reads and parses the JSON body of r with the checks of upstream's
// JSON extractor, in its order: the content type, the declared length, the
// length actually read, then the JSON itself.
func (a *API) readJSON(r *http.Request) (*jsonDoc, error) {
	if !isJSONContentType(r.Header.Get("Content-Type")) {
		return nil, badRequest("Content type error")
	}
	limit := a.opts.MaxBodySize
	if r.ContentLength > limit {
		return nil, &httpError{http.StatusRequestEntityTooLarge,
			fmt.Sprintf("JSON payload (%d bytes) is larger than allowed (limit: %d bytes).", r.ContentLength, limit)}
	}
	body := r.Body
	if body == nil { // a hand-made request; servers always set one
		body = http.NoBody
	}
	src, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err != nil {
		return nil, badRequest("Error that occur during reading payload: " + err.Error())
	}
	if int64(len(src)) > limit {
		return nil, &httpError{http.StatusRequestEntityTooLarge,
			fmt.Sprintf("JSON payload has exceeded limit (%d bytes).", limit)}
	}
	return parseDoc(src)
}

func parseDoc(src []byte) (*jsonDoc, error) {
	v, err := wire.Parse(src)
	if err != nil {
		return nil, badRequest("Json deserialize error: " + err.Error())
	}
	return &jsonDoc{src: src, root: v}, nil
}

// isJSONContentType accepts, as upstream does, a media type whose subtype is
// json or ends in +json, with any parameters: application/json,
// text/json; charset=utf-8, application/problem+json.
func isJSONContentType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	typ, sub, ok := strings.Cut(mt, "/")
	return ok && typ != "" && (sub == "json" || strings.HasSuffix(sub, "+json"))
}

// fail is a 400 for the value ending at offset end.
func (d *jsonDoc) fail(end int, msg string) error {
	return badRequest("Json deserialize error: " + wire.ErrorAt(d.src, end, msg).Error())
}

func (d *jsonDoc) invalidType(v *wire.Value, expected string) error {
	return d.fail(v.End, "invalid type: "+describe(v)+", expected "+expected)
}

// describe names v as serde's "invalid type" messages do.
func describe(v *wire.Value) string {
	switch v.Kind {
	case wire.Null:
		return "null"
	case wire.Bool:
		return "boolean `" + v.Text + "`"
	case wire.Number:
		if isFloatLiteral(v.Text) {
			return "floating point `" + v.Text + "`"
		}
		return "integer `" + v.Text + "`"
	case wire.String:
		return "string " + wire.RustQuote(v.Text)
	case wire.Array:
		return "sequence"
	default:
		return "map"
	}
}

func isFloatLiteral(s string) bool { return strings.ContainsAny(s, ".eE") }

// members calls fn, in document order, for each member of the top-level
// object whose key is in known. Other keys are ignored, as upstream does; a
// known key given twice is refused, as serde does.
func (d *jsonDoc) members(known []string, fn func(key string, v *wire.Value) error) error {
	if d.root.Kind != wire.Object {
		return d.invalidType(&d.root, "a JSON object")
	}
	var seen []string
	for i := range d.root.Members {
		m := &d.root.Members[i]
		if !slices.Contains(known, m.Key) {
			continue
		}
		if slices.Contains(seen, m.Key) {
			return d.fail(m.KeyEnd, "duplicate field `"+m.Key+"`")
		}
		seen = append(seen, m.Key)
		if err := fn(m.Key, &m.Value); err != nil {
			return err
		}
	}
	return nil
}

// duration reads a duration string, truncated to whole seconds as Ocypod
// stores job and queue settings.
func (d *jsonDoc) duration(v *wire.Value) (ocypod.Duration, error) {
	if v.Kind != wire.String {
		return ocypod.Duration{}, d.invalidType(v, "a duration string")
	}
	dur, err := ocypod.ParseDuration(v.Text)
	if err != nil {
		return ocypod.Duration{}, d.fail(v.End, err.Error())
	}
	return dur.Truncate(), nil
}

func (d *jsonDoc) durations(v *wire.Value) ([]ocypod.Duration, error) {
	if v.Kind != wire.Array {
		return nil, d.invalidType(v, "a sequence")
	}
	ds := make([]ocypod.Duration, len(v.Elems))
	for i := range v.Elems {
		var err error
		if ds[i], err = d.duration(&v.Elems[i]); err != nil {
			return nil, err
		}
	}
	return ds, nil
}

func (d *jsonDoc) uint64(v *wire.Value) (uint64, error) {
	if v.Kind != wire.Number || isFloatLiteral(v.Text) {
		return 0, d.invalidType(v, "u64")
	}
	if v.Text == "-0" {
		return 0, nil
	}
	n, err := strconv.ParseUint(v.Text, 10, 64)
	if err != nil {
		return 0, d.fail(v.End, "invalid value: integer `"+v.Text+"`, expected u64")
	}
	return n, nil
}

func (d *jsonDoc) strings(v *wire.Value) ([]string, error) {
	if v.Kind != wire.Array {
		return nil, d.invalidType(v, "a sequence")
	}
	ss := make([]string, len(v.Elems))
	for i := range v.Elems {
		e := &v.Elems[i]
		if e.Kind != wire.String {
			return nil, d.invalidType(e, "a string")
		}
		ss[i] = e.Text
	}
	return ss, nil
}

// queueSettingsFields are the keys of PUT /queue/{name}'s body.
var queueSettingsFields = []string{"timeout", "heartbeat_timeout", "expires_after", "retries", "retry_delays"}

// decodeQueueSettings reads PUT /queue/{name}'s body. Missing fields take
// the built-in defaults (not the queue's current values, as upstream); an
// explicit null is refused, as upstream's non-optional fields did.
func decodeQueueSettings(d *jsonDoc) (ocypod.QueueSettings, error) {
	s := ocypod.DefaultQueueSettings()
	err := d.members(queueSettingsFields, func(key string, v *wire.Value) (err error) {
		switch key {
		case "timeout":
			s.Timeout, err = d.duration(v)
		case "heartbeat_timeout":
			s.HeartbeatTimeout, err = d.duration(v)
		case "expires_after":
			s.ExpiresAfter, err = d.duration(v)
		case "retries":
			s.Retries, err = d.uint64(v)
		case "retry_delays":
			s.RetryDelays, err = d.durations(v)
		}
		return err
	})
	return s, err
}

var jobSpecFields = []string{"input", "tags", "timeout", "heartbeat_timeout", "expires_after", "retries", "retry_delays"}

// decodeJobSpec reads POST /queue/{name}/job's body, input canonicalised.
// null stands for an absent field. The spec is validated (no empty tags).
func decodeJobSpec(d *jsonDoc) (ocypod.JobSpec, error) {
	var s ocypod.JobSpec
	durationPtr := func(v *wire.Value) (*ocypod.Duration, error) {
		dur, err := d.duration(v)
		return &dur, err
	}
	err := d.members(jobSpecFields, func(key string, v *wire.Value) (err error) {
		if v.Kind == wire.Null {
			return nil
		}
		switch key {
		case "input":
			s.Input = wire.Canonical(v)
		case "tags":
			s.Tags, err = d.strings(v)
		case "timeout":
			s.Timeout, err = durationPtr(v)
		case "heartbeat_timeout":
			s.HeartbeatTimeout, err = durationPtr(v)
		case "expires_after":
			s.ExpiresAfter, err = durationPtr(v)
		case "retries":
			var n uint64
			n, err = d.uint64(v)
			s.Retries = &n
		case "retry_delays":
			s.RetryDelays, err = d.durations(v)
			s.RetryDelaysSet = true
		}
		return err
	})
	if err != nil {
		return ocypod.JobSpec{}, err
	}
	if err := s.Validate(); err != nil {
		return ocypod.JobSpec{}, err
	}
	return s, nil
}

var jobUpdateFields = []string{"status", "output"}

// statusVariants is serde's list of the Status enum's variants.
const statusVariants = "`queued`, `running`, `completed`, `failed`, `cancelled`, `timed_out`"

// decodeJobUpdate reads PATCH /job/{id}'s body, output canonicalised. null
// stands for an absent field, so PATCH cannot set the output to null.
func decodeJobUpdate(d *jsonDoc) (ocypod.JobUpdate, error) {
	var u ocypod.JobUpdate
	err := d.members(jobUpdateFields, func(key string, v *wire.Value) error {
		if v.Kind == wire.Null {
			return nil
		}
		if key == "output" {
			u.Output = wire.Canonical(v)
			return nil
		}
		if v.Kind != wire.String {
			return d.invalidType(v, "a status string")
		}
		st, ok := ocypod.ParseStatus(v.Text)
		if !ok {
			return d.fail(v.End, "unknown variant `"+v.Text+"`, expected one of "+statusVariants)
		}
		u.Status = &st
		return nil
	})
	return u, err
}

// decodeOutput reads PUT /job/{id}/output's body: any JSON value, null
// included, canonicalised.
func decodeOutput(d *jsonDoc) json.RawMessage {
	return wire.AppendCanonical(nil, &d.root)
}
