package wire

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Response bodies are built by hand: Ocypod's key orders are part of the
// wire contract, and the field list of GET /job/{id} is chosen per request.

// AppendString appends s as a JSON string, escaped as serde_json does: only
// '"', '\\' and control characters; everything else, '/' and U+2028
// included, is written as is. Invalid UTF-8 becomes U+FFFD.
func AppendString(b []byte, s string) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendCanonical appends v as Canonical JSON: compact, object keys sorted
// by byte order with the last of duplicate keys kept (as upstream's
// serde_json maps did), strings escaped by AppendString, numbers as written.
func AppendCanonical(b []byte, v *Value) []byte {
	switch v.Kind {
	case String:
		return AppendString(b, v.Text)
	case Array:
		b = append(b, '[')
		for i := range v.Elems {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendCanonical(b, &v.Elems[i])
		}
		return append(b, ']')
	case Object:
		// Stable sort by key, then keep the last member of each run.
		ms := make([]*Member, len(v.Members))
		for i := range v.Members {
			ms[i] = &v.Members[i]
		}
		slices.SortStableFunc(ms, func(x, y *Member) int { return strings.Compare(x.Key, y.Key) })
		b = append(b, '{')
		first := true
		for i, m := range ms {
			if i+1 < len(ms) && ms[i+1].Key == m.Key {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = AppendString(b, m.Key)
			b = append(b, ':')
			b = AppendCanonical(b, &m.Value)
		}
		return append(b, '}')
	default: // null, bool and number keep their literal text
		return append(b, v.Text...)
	}
}

// Canonical returns v as Canonical JSON, or nil for JSON null.
func Canonical(v *Value) json.RawMessage {
	if v.Kind == Null {
		return nil
	}
	return AppendCanonical(nil, v)
}

// AppendRaw appends stored JSON (already Canonical), or null for none.
func AppendRaw(b []byte, raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return append(b, "null"...)
	}
	return append(b, raw...)
}

func AppendUint(b []byte, n uint64) []byte { return strconv.AppendUint(b, n, 10) }

func AppendDuration(b []byte, d ocypod.Duration) []byte { return AppendString(b, d.String()) }

func AppendDurations(b []byte, ds []ocypod.Duration) []byte {
	b = append(b, '[')
	for i, d := range ds {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendDuration(b, d)
	}
	return append(b, ']')
}

func AppendIDs(b []byte, ids []uint64) []byte {
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendUint(b, id)
	}
	return append(b, ']')
}

func AppendTime(b []byte, t *time.Time) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	return AppendString(b, ocypod.FormatTime(*t))
}

// AppendKey appends `"key":`, preceded by a comma unless it opens an object.
func AppendKey(b []byte, key string) []byte {
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = AppendString(b, key)
	return append(b, ':')
}

// AppendStrings appends a JSON array of strings ([] when empty).
func AppendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, s)
	}
	return append(b, ']')
}
