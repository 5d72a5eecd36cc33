package ocypod

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Duration is a span of time as Ocypod reads and writes it: whole seconds plus
// nanoseconds, parsed with Ocypod's grammar (for example "1h 30m", "90s",
// "2days") and printed in its format ("1h 30m", "1day", "14days 10h 17m 36s").
// Job and queue settings keep whole seconds only (see Truncate); configuration
// intervals keep the nanoseconds.
type Duration struct {
	Secs  uint64
	Nanos uint32 // always < 1e9
}

// Seconds returns a Duration of s whole seconds.
func Seconds(s uint64) Duration { return Duration{Secs: s} }

// IsZero reports whether d is zero, which disables a timeout or an expiry.
func (d Duration) IsZero() bool { return d.Secs == 0 && d.Nanos == 0 }

// Truncate drops the sub-second part, as Ocypod does when it stores a
// duration: "1500ms" is stored as 1s and "500ms" as 0s.
func (d Duration) Truncate() Duration { return Duration{Secs: d.Secs} }

// Std converts d to a time.Duration, saturating at the largest time.Duration.
func (d Duration) Std() time.Duration {
	const maxSecs = uint64(math.MaxInt64 / int64(time.Second))
	if d.Secs >= maxSecs {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(d.Secs)*time.Second + time.Duration(d.Nanos)
}

// FromStd converts a non-negative time.Duration; negative values become zero.
func FromStd(t time.Duration) Duration {
	if t <= 0 {
		return Duration{}
	}
	return Duration{Secs: uint64(t / time.Second), Nanos: uint32(t % time.Second)}
}

// Lengths of the calendar-ish units, in seconds, as Ocypod defines them.
const (
	secsPerMinute = 60
	secsPerHour   = 3600
	secsPerDay    = 86_400
	secsPerWeek   = 7 * secsPerDay
	secsPerMonth  = 2_630_016  // 30.44 days
	secsPerYear   = 31_557_600 // 365.25 days
)

// String formats d as Ocypod does: "0s" for zero, otherwise the non-zero
// parts among years, months, days, h, m, s, ms, us and ns joined by spaces.
// Years, months and days take a plural "s" above one; weeks are never printed.
func (d Duration) String() string {
	if d.IsZero() {
		return "0s"
	}
	secs := d.Secs
	years := secs / secsPerYear
	ydays := secs % secsPerYear
	months := ydays / secsPerMonth
	mdays := ydays % secsPerMonth
	days := mdays / secsPerDay
	daySecs := mdays % secsPerDay
	var b strings.Builder
	item := func(v uint64, unit string, plural bool) {
		if v == 0 {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatUint(v, 10))
		b.WriteString(unit)
		if plural && v > 1 {
			b.WriteByte('s')
		}
	}
	item(years, "year", true)
	item(months, "month", true)
	item(days, "day", true)
	item(daySecs/secsPerHour, "h", false)
	item(daySecs%secsPerHour/secsPerMinute, "m", false)
	item(daySecs%secsPerMinute, "s", false)
	item(uint64(d.Nanos/1_000_000), "ms", false)
	item(uint64(d.Nanos/1000%1000), "us", false)
	item(uint64(d.Nanos%1000), "ns", false)
	return b.String()
}

// DurationError is a duration that does not parse. Its text is Ocypod's.
type DurationError struct{ msg string }

func (e *DurationError) Error() string { return e.msg }

var errNumberTooLarge = &DurationError{"number is too large"}

// ParseDuration parses Ocypod's duration grammar: one or more
// "<unsigned integer><unit>" items, concatenated or separated by whitespace,
// with optional surrounding whitespace, e.g. "1h15m5s", "1h 15m 5s", "3w2d",
// "2h 37min". Whitespace inside a number is skipped. Units are case-sensitive:
// ns, us, ms, s, m, h, d, w, M (30.44 days), y (365.25 days) and their long
// forms. Errors carry Ocypod's messages (e.g. "value was empty",
// "expected number at 0", "invalid character at 2", "number is too large").
func ParseDuration(s string) (Duration, error) {
	p := durationParser{src: s}
	return p.parse()
}

type durationParser struct {
	src   string
	pos   int // byte offset of the next rune
	secs  uint64
	nanos uint64
}

func (p *durationParser) next() (rune, bool) {
	if p.pos >= len(p.src) {
		return 0, false
	}
	r, w := utf8.DecodeRuneInString(p.src[p.pos:])
	p.pos += w
	return r, true
}

// firstDigit skips whitespace and returns the next digit, or ok=false at the
// end of input. Anything else is "expected number at <offset of the call>".
func (p *durationParser) firstDigit() (uint64, bool, error) {
	off := p.pos
	for {
		c, ok := p.next()
		if !ok {
			return 0, false, nil
		}
		switch {
		case c >= '0' && c <= '9':
			return uint64(c - '0'), true, nil
		case unicode.IsSpace(c):
			continue
		default:
			return 0, false, &DurationError{fmt.Sprintf("expected number at %d", off)}
		}
	}
}

func isLetter(c rune) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func (p *durationParser) parse() (Duration, error) {
	n, ok, err := p.firstDigit()
	if err != nil {
		return Duration{}, err
	}
	if !ok {
		return Duration{}, &DurationError{"value was empty"}
	}
	for {
		// The rest of the number; whitespace inside it is skipped.
		off := p.pos
		for {
			c, ok := p.next()
			if !ok {
				break
			}
			if c >= '0' && c <= '9' {
				hi, lo := bits.Mul64(n, 10)
				sum, carry := bits.Add64(lo, uint64(c-'0'), 0)
				if hi != 0 || carry != 0 {
					return Duration{}, errNumberTooLarge
				}
				n = sum
			} else if unicode.IsSpace(c) {
				// skipped
			} else if isLetter(c) {
				break
			} else {
				return Duration{}, &DurationError{fmt.Sprintf("invalid character at %d", off)}
			}
			off = p.pos
		}
		// The unit: letters up to whitespace, a digit (next item) or the end.
		start := off
		off = p.pos
		nextItem := false
		for {
			c, ok := p.next()
			if !ok {
				break
			}
			if c >= '0' && c <= '9' {
				if err := p.addUnit(n, p.src[start:off]); err != nil {
					return Duration{}, err
				}
				n = uint64(c - '0')
				nextItem = true
				break
			} else if unicode.IsSpace(c) {
				break
			} else if !isLetter(c) {
				return Duration{}, &DurationError{fmt.Sprintf("invalid character at %d", off)}
			}
			off = p.pos
		}
		if nextItem {
			continue
		}
		if err := p.addUnit(n, p.src[start:off]); err != nil {
			return Duration{}, err
		}
		d, ok, err := p.firstDigit()
		if err != nil {
			return Duration{}, err
		}
		if !ok {
			secs, carry := bits.Add64(p.secs, p.nanos/1e9, 0)
			if carry != 0 {
				return Duration{}, errNumberTooLarge
			}
			return Duration{Secs: secs, Nanos: uint32(p.nanos % 1e9)}, nil
		}
		n = d
	}
}

func mul(a, b uint64) (uint64, error) {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return 0, errNumberTooLarge
	}
	return lo, nil
}

func (p *durationParser) addUnit(n uint64, unit string) error {
	var secs, nanos uint64
	var err error
	switch unit {
	case "nanos", "nsec", "ns":
		nanos = n
	case "usec", "us":
		nanos, err = mul(n, 1000)
	case "millis", "msec", "ms":
		nanos, err = mul(n, 1_000_000)
	case "seconds", "second", "secs", "sec", "s":
		secs = n
	case "minutes", "minute", "min", "mins", "m":
		secs, err = mul(n, secsPerMinute)
	case "hours", "hour", "hr", "hrs", "h":
		secs, err = mul(n, secsPerHour)
	case "days", "day", "d":
		secs, err = mul(n, secsPerDay)
	case "weeks", "week", "w":
		secs, err = mul(n, secsPerWeek)
	case "months", "month", "M":
		secs, err = mul(n, secsPerMonth)
	case "years", "year", "y":
		secs, err = mul(n, secsPerYear)
	case "":
		return &DurationError{fmt.Sprintf("time unit needed, for example %dsec or %dms", n, n)}
	default:
		return &DurationError{fmt.Sprintf("unknown time unit %s, supported units: ns, us, ms, sec, min, hours, days, weeks, months, years (and few variations)", strconv.Quote(unit))}
	}
	if err != nil {
		return err
	}
	// Carry whole seconds out of the nanoseconds as they accumulate.
	total, carry := bits.Add64(p.nanos, nanos, 0)
	if carry != 0 {
		return errNumberTooLarge
	}
	if total >= 1e9 {
		secs, carry = bits.Add64(secs, total/1e9, 0)
		if carry != 0 {
			return errNumberTooLarge
		}
		total %= 1e9
	}
	sum, carry := bits.Add64(p.secs, secs, 0)
	if carry != 0 {
		return errNumberTooLarge
	}
	p.secs, p.nanos = sum, total
	return nil
}

// MarshalJSON writes d as a JSON string in Ocypod's format.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(d.String())
}

// UnmarshalJSON reads a JSON string in Ocypod's grammar. Any other JSON type
// is an error, as in Ocypod.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if len(b) == 0 || b[0] != '"' {
		return fmt.Errorf("invalid type: %s, expected a duration string", jsonKind(b))
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// jsonKind names the JSON type of a raw value for error messages, in the
// words serde uses ("integer `30`", "null", "sequence", "map", ...).
func jsonKind(b []byte) string {
	s := strings.TrimSpace(string(b))
	switch {
	case s == "":
		return "nothing"
	case s == "null":
		return "null"
	case s == "true" || s == "false":
		return "boolean `" + s + "`"
	case s[0] == '[':
		return "sequence"
	case s[0] == '{':
		return "map"
	case s[0] == '"':
		return "string"
	case strings.ContainsAny(s, ".eE"):
		return "floating point `" + s + "`"
	default:
		return "integer `" + s + "`"
	}
}
