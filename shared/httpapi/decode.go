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
)

// jsonDoc is a parsed request body; src positions its errors.
type jsonDoc struct {
	src  []byte
	root jsonValue
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
	v, err := parseJSON(src)
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
	return badRequest("Json deserialize error: " + errorAt(d.src, end, msg).Error())
}

func (d *jsonDoc) invalidType(v *jsonValue, expected string) error {
	return d.fail(v.end, "invalid type: "+describe(v)+", expected "+expected)
}

// describe names v as serde's "invalid type" messages do.
func describe(v *jsonValue) string {
	switch v.kind {
	case jsonNull:
		return "null"
	case jsonBool:
		return "boolean `" + v.text + "`"
	case jsonNumber:
		if isFloatLiteral(v.text) {
			return "floating point `" + v.text + "`"
		}
		return "integer `" + v.text + "`"
	case jsonString:
		return "string " + rustQuote(v.text)
	case jsonArray:
		return "sequence"
	default:
		return "map"
	}
}

func isFloatLiteral(s string) bool { return strings.ContainsAny(s, ".eE") }

// members calls fn, in document order, for each member of the top-level
// object whose key is in known. Other keys are ignored, as upstream does; a
// known key given twice is refused, as serde does.
func (d *jsonDoc) members(known []string, fn func(key string, v *jsonValue) error) error {
	if d.root.kind != jsonObject {
		return d.invalidType(&d.root, "a JSON object")
	}
	var seen []string
	for i := range d.root.members {
		m := &d.root.members[i]
		if !slices.Contains(known, m.key) {
			continue
		}
		if slices.Contains(seen, m.key) {
			return d.fail(m.keyEnd, "duplicate field `"+m.key+"`")
		}
		seen = append(seen, m.key)
		if err := fn(m.key, &m.value); err != nil {
			return err
		}
	}
	return nil
}

// duration reads a duration string, truncated to whole seconds as Ocypod
// stores job and queue settings.
func (d *jsonDoc) duration(v *jsonValue) (ocypod.Duration, error) {
	if v.kind != jsonString {
		return ocypod.Duration{}, d.invalidType(v, "a duration string")
	}
	dur, err := ocypod.ParseDuration(v.text)
	if err != nil {
		return ocypod.Duration{}, d.fail(v.end, err.Error())
	}
	return dur.Truncate(), nil
}

func (d *jsonDoc) durations(v *jsonValue) ([]ocypod.Duration, error) {
	if v.kind != jsonArray {
		return nil, d.invalidType(v, "a sequence")
	}
	ds := make([]ocypod.Duration, len(v.elems))
	for i := range v.elems {
		var err error
		if ds[i], err = d.duration(&v.elems[i]); err != nil {
			return nil, err
		}
	}
	return ds, nil
}

func (d *jsonDoc) uint64(v *jsonValue) (uint64, error) {
	if v.kind != jsonNumber || isFloatLiteral(v.text) {
		return 0, d.invalidType(v, "u64")
	}
	if v.text == "-0" {
		return 0, nil
	}
	n, err := strconv.ParseUint(v.text, 10, 64)
	if err != nil {
		return 0, d.fail(v.end, "invalid value: integer `"+v.text+"`, expected u64")
	}
	return n, nil
}

func (d *jsonDoc) strings(v *jsonValue) ([]string, error) {
	if v.kind != jsonArray {
		return nil, d.invalidType(v, "a sequence")
	}
	ss := make([]string, len(v.elems))
	for i := range v.elems {
		e := &v.elems[i]
		if e.kind != jsonString {
			return nil, d.invalidType(e, "a string")
		}
		ss[i] = e.text
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
	err := d.members(queueSettingsFields, func(key string, v *jsonValue) (err error) {
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
	durationPtr := func(v *jsonValue) (*ocypod.Duration, error) {
		dur, err := d.duration(v)
		return &dur, err
	}
	err := d.members(jobSpecFields, func(key string, v *jsonValue) (err error) {
		if v.kind == jsonNull {
			return nil
		}
		switch key {
		case "input":
			s.Input = canonical(v)
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
	err := d.members(jobUpdateFields, func(key string, v *jsonValue) error {
		if v.kind == jsonNull {
			return nil
		}
		if key == "output" {
			u.Output = canonical(v)
			return nil
		}
		if v.kind != jsonString {
			return d.invalidType(v, "a status string")
		}
		st, ok := ocypod.ParseStatus(v.text)
		if !ok {
			return d.fail(v.end, "unknown variant `"+v.text+"`, expected one of "+statusVariants)
		}
		u.Status = &st
		return nil
	})
	return u, err
}

// decodeOutput reads PUT /job/{id}/output's body: any JSON value, null
// included, canonicalised.
func decodeOutput(d *jsonDoc) json.RawMessage {
	return appendCanonical(nil, &d.root)
}
