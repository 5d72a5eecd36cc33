package config

import (
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// LevelTrace is Ocypod's "trace" log level, below slog.LevelDebug.
const LevelTrace = slog.LevelDebug - 4

// ParseLevel reads Ocypod's log levels, case-insensitively: error, warn,
// info, debug, trace. Anything else is "Invalid log level: <v>".
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "error":
		return slog.LevelError, nil
	case "warn":
		return slog.LevelWarn, nil
	case "info":
		return slog.LevelInfo, nil
	case "debug":
		return slog.LevelDebug, nil
	case "trace":
		return LevelTrace, nil
	}
	return 0, upstreamError("Invalid log level: " + s)
}

// LevelName is the Ocypod name of l ("trace" … "error").
func LevelName(l slog.Level) string {
	switch {
	case l <= LevelTrace:
		return "trace"
	case l <= slog.LevelDebug:
		return "debug"
	case l <= slog.LevelInfo:
		return "info"
	case l <= slog.LevelWarn:
		return "warn"
	}
	return "error"
}

// sizeUnits are human-size's byte multiples, keyed by lower-cased unit.
// Matching is case-insensitive except for the exact unit "KB", which means
// KiB (as in human-size 0.4); "kB", "Kb" and "kb" are 1000.
var sizeUnits = map[string]float64{
	"b":  1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "pb": 1e15, "eb": 1e18, "zb": 1e21, "yb": 1e24,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40, "pib": 1 << 50, "eib": 1 << 60,
	"zib": 1 << 70, "yib": 1 << 80,
}

// ParseSize reads a human-size string such as "256KiB", "1.5 MB" or "10kB":
// a number with an optional fraction, optional spaces, then a unit (B, kB,
// MB, … powers of 1000; KiB, MiB, … powers of 1024; exactly "KB" is KiB).
// Bare numbers, signs and unknown units are refused with Ocypod's text
// "Unable to parse size '<s>'". The result is truncated to whole bytes.
func ParseSize(s string) (int64, error) {
	bad := upstreamError("Unable to parse size '" + s + "'")
	i := strings.IndexFunc(s, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
	if i <= 0 {
		return 0, bad // no unit, or no number before it
	}
	num := s[:i]
	if strings.Count(num, ".") > 1 || num == "." {
		return 0, bad
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, bad
	}
	unit := strings.TrimSpace(s[i:])
	mult, ok := sizeUnits[strings.ToLower(unit)]
	if unit == "KB" {
		mult = 1 << 10
	}
	if !ok {
		return 0, bad
	}
	b := math.Floor(v * mult)
	if b >= math.MaxInt64 {
		return 0, upstreamError("Unable to parse size '" + s + "': too large")
	}
	return int64(b), nil
}

// FormatSize writes a byte count the way ParseSize reads it back: in the
// largest binary unit that divides it exactly (512MiB, 1536KiB), else in B.
func FormatSize(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n > 0 && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// parseDuration reads Ocypod's duration grammar into a time.Duration,
// keeping sub-second precision and saturating at the largest value.
func parseDuration(s string) (time.Duration, error) {
	d, err := ocypod.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: %w", s, err)
	}
	return d.Std(), nil
}

// parseShutdown reads server.shutdown_timeout, which Ocypod truncates to
// whole seconds. The maximum is checked by Validate, so that the error is,
// as upstream, not wrapped as a file error.
func parseShutdown(s string) (time.Duration, error) {
	d, err := ocypod.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: %w", s, err)
	}
	return d.Truncate().Std(), nil // Validate enforces MaxShutdownTimeout
}
