package httpapi

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/wire"
)

// The readers of extension values. Ocypod's own fields keep serde's error
// texts (wire.Doc); an extension field or parameter that is wrong in type,
// range or value is a 400 "Invalid <field>: <why>", the style of the
// extension contract.

// integerText reports whether s is an integer literal: an optional '-'
// then digits (what JSON allows; no fraction, no exponent).
func integerText(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// intValue reads an integer from lo to hi.
func intValue(v *wire.Value, field string, lo, hi int64) (int64, error) {
	why := fmt.Sprintf("must be an integer from %d to %d", lo, hi)
	if v.Kind != wire.Number || !integerText(v.Text) {
		return 0, invalid(field, why)
	}
	n, err := strconv.ParseInt(v.Text, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, invalid(field, why)
	}
	return n, nil
}

// uintValue reads a non-negative integer.
func uintValue(v *wire.Value, field string) (uint64, error) {
	if v.Kind == wire.Number && integerText(v.Text) {
		if v.Text == "-0" {
			return 0, nil
		}
		if n, err := strconv.ParseUint(v.Text, 10, 64); err == nil {
			return n, nil
		}
	}
	return 0, invalid(field, "must be a non-negative integer")
}

func boolValue(v *wire.Value, field string) (bool, error) {
	if v.Kind != wire.Bool {
		return false, invalid(field, "must be true or false")
	}
	return v.Text == "true", nil
}

// timeValue reads an RFC 3339 time, any offset; the result is in UTC.
func timeValue(v *wire.Value, field string) (time.Time, error) {
	if v.Kind != wire.String {
		return time.Time{}, invalid(field, "must be an RFC 3339 time such as \"2024-03-01T10:00:00Z\"")
	}
	return parseTime(v.Text, field)
}

func parseTime(s, field string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Year() < 1970 {
		return time.Time{}, invalid(field, "must be an RFC 3339 time such as \"2024-03-01T10:00:00Z\"")
	}
	return t.UTC(), nil
}

// durationValue reads a duration in Ocypod's grammar, to the nanosecond.
func durationValue(v *wire.Value, field string) (ocypod.Duration, error) {
	if v.Kind != wire.String {
		return ocypod.Duration{}, invalid(field, "must be a duration string such as \"30s\"")
	}
	return parseDurationValue(v.Text, field)
}

func parseDurationValue(s, field string) (ocypod.Duration, error) {
	if strings.HasPrefix(strings.TrimSpace(s), "-") {
		// Ocypod's grammar has no sign: say what is wrong rather than
		// where the parser stopped.
		return ocypod.Duration{}, invalid(field, "must not be negative")
	}
	d, err := ocypod.ParseDuration(s)
	if err != nil {
		return ocypod.Duration{}, invalid(field, err.Error())
	}
	return d, nil
}

// printable reports whether s is 1 to max characters, each printable
// (letters, marks, numbers, punctuation, symbols and the ASCII space).
func printable(s string, max int) bool {
	if s == "" || !utf8.ValidString(s) || utf8.RuneCountInString(s) > max {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// nameValue reads a string of 1 to max printable characters.
func nameValue(v *wire.Value, field string, max int) (string, error) {
	if v.Kind != wire.String || !printable(v.Text, max) {
		return "", invalid(field, fmt.Sprintf("must be 1 to %d printable characters", max))
	}
	return v.Text, nil
}

// enumValue reads one of the strings of values.
func enumValue(v *wire.Value, field string, values ...string) (string, error) {
	if v.Kind == wire.String {
		for _, s := range values {
			if v.Text == s {
				return s, nil
			}
		}
	}
	return "", invalid(field, "must be one of "+joinQuoted(values))
}

func joinQuoted(values []string) string {
	var b []byte
	for i, s := range values {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendQuote(b, s)
	}
	return string(b)
}

// idsValue reads an array of at most max job ids, each kept once.
func idsValue(v *wire.Value, field string, max int) ([]uint64, error) {
	why := fmt.Sprintf("must be an array of at most %d job ids", max)
	if v.Kind != wire.Array {
		return nil, invalid(field, why)
	}
	ids := make([]uint64, 0, len(v.Elems))
	for i := range v.Elems {
		e := &v.Elems[i]
		if e.Kind != wire.Number || !integerText(e.Text) {
			return nil, invalid(field, why)
		}
		id, err := strconv.ParseUint(e.Text, 10, 64)
		if err != nil {
			return nil, invalid(field, why)
		}
		if !containsID(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) > max {
		return nil, invalid(field, why)
	}
	return ids, nil
}

func containsID(ids []uint64, id uint64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

var backoffFields = []string{"min", "max", "factor", "jitter"}

// backoffValue reads a retry_backoff: {"min": dur, "max": dur, "factor":
// number >= 1 (default 2), "jitter": bool (default true)}. min and max are
// whole seconds (as retry_delays), min at least 1s and max at least min.
func backoffValue(d *wire.Doc, v *wire.Value, field string) (*ocypod.Backoff, error) {
	shape := `must be an object {"min": duration, "max": duration, "factor": number, "jitter": bool}`
	if v.Kind != wire.Object {
		return nil, invalid(field, shape)
	}
	b := &ocypod.Backoff{Factor: ocypod.DefaultBackoffFactor, Jitter: true}
	var haveMin, haveMax bool
	if err := refuseUnknown(v, backoffFields, field+"."); err != nil {
		return nil, err
	}
	err := d.Members(v, backoffFields, func(key string, m *wire.Value) error {
		switch key {
		case "min", "max":
			dur, err := durationValue(m, field+"."+key)
			if err != nil {
				return err
			}
			if key == "min" {
				b.Min, haveMin = dur.Truncate(), true
			} else {
				b.Max, haveMax = dur.Truncate(), true
			}
		case "factor":
			f, err := strconv.ParseFloat(m.Text, 64)
			if m.Kind != wire.Number || err != nil || !(f >= 1) || math.IsInf(f, 0) {
				return invalid(field, "factor must be a number of at least 1")
			}
			b.Factor = f
		case "jitter":
			j, err := boolValue(m, field+".jitter")
			if err != nil {
				return err
			}
			b.Jitter = j
		}
		return nil
	})
	switch {
	case err != nil:
		return nil, err
	case !haveMin || !haveMax:
		return nil, invalid(field, "needs min and max")
	case b.Min.Secs < 1:
		return nil, invalid(field, "min must be at least 1s")
	case b.Max.Secs < b.Min.Secs:
		return nil, invalid(field, "max must be at least min")
	}
	return b, nil
}

// queueNameValue reads a queue name (Ocypod's 400 when it is not valid).
func queueNameValue(v *wire.Value, field string) (string, error) {
	if v.Kind != wire.String {
		return "", invalid(field, "must be a queue name")
	}
	if !ocypod.ValidQueueName(v.Text) {
		return "", ocypod.InvalidQueueName()
	}
	return v.Text, nil
}

// ptr returns a pointer to a decoded value with its error, for the
// optional fields a request may leave out.
func ptr[T any](v T, err error) (*T, error) { return &v, err }
