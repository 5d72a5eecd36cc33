package client

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// object builds a JSON object whose keys keep the order they were added
// in, as the server documents its fields. The first encoding failure is
// kept and reported by bytes.
type object struct {
	b   []byte
	err error
}

func (o *object) key(k string) {
	if o.b == nil {
		o.b = append(o.b, '{')
	} else {
		o.b = append(o.b, ',')
	}
	o.b = strconv.AppendQuote(o.b, k)
	o.b = append(o.b, ':')
}

// raw adds a value already encoded.
func (o *object) raw(k string, v []byte) {
	o.key(k)
	o.b = append(o.b, v...)
}

// value adds v as encoding/json writes it.
func (o *object) value(k string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		o.fail(fmt.Errorf("%s: %w", k, err))
		return
	}
	o.raw(k, b)
}

// null adds k: null.
func (o *object) null(k string) { o.raw(k, []byte("null")) }

// duration adds a duration in the server's grammar.
func (o *object) duration(k string, d time.Duration) {
	s, err := formatDuration(d)
	if err != nil {
		o.fail(fmt.Errorf("%s: %w", k, err))
		return
	}
	o.value(k, s)
}

// durations adds a list of durations (an empty list for a non-nil empty
// slice).
func (o *object) durations(k string, ds []time.Duration) {
	ss := make([]string, len(ds))
	for i, d := range ds {
		var err error
		if ss[i], err = formatDuration(d); err != nil {
			o.fail(fmt.Errorf("%s: %w", k, err))
			return
		}
	}
	o.value(k, ss)
}

// time adds a time as RFC 3339 in UTC.
func (o *object) time(k string, t time.Time) {
	o.value(k, t.UTC().Format(time.RFC3339Nano))
}

// input adds user JSON: json.RawMessage passes as it is, anything else
// goes through encoding/json.
func (o *object) input(k string, v any) {
	if raw, ok := v.(json.RawMessage); ok {
		if !json.Valid(raw) {
			o.fail(fmt.Errorf("%s: invalid JSON", k))
			return
		}
		o.raw(k, raw)
		return
	}
	o.value(k, v)
}

func (o *object) fail(err error) {
	if o.err == nil {
		o.err = fmt.Errorf("ocyless: encoding %w", err)
	}
}

// bytes returns the object ({} when empty) or the first encoding error.
func (o *object) bytes() ([]byte, error) {
	if o.err != nil {
		return nil, o.err
	}
	if o.b == nil {
		return []byte("{}"), nil
	}
	return append(o.b, '}'), nil
}

// formatDuration writes d in the server's duration grammar ("1h 30m",
// "1500ms" as "1s 500ms"). Negative durations are refused: the server has
// none, and "0s" would disable a timeout instead.
func formatDuration(d time.Duration) (string, error) {
	if d < 0 {
		return "", fmt.Errorf("negative duration %s", d)
	}
	return ocypod.FromStd(d).String(), nil
}

// duration is a time.Duration read from the server's duration strings.
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := ocypod.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: %w", s, err)
	}
	*d = duration(v.Std())
	return nil
}

// durationList reads a list of durations; null is nil.
type durationList []time.Duration

func (l *durationList) UnmarshalJSON(b []byte) error {
	var ds []duration
	if err := json.Unmarshal(b, &ds); err != nil {
		return err
	}
	if ds == nil {
		*l = nil
		return nil
	}
	*l = make([]time.Duration, len(ds))
	for i, d := range ds {
		(*l)[i] = time.Duration(d)
	}
	return nil
}
