package config

import (
	"log/slog"
	"testing"
)

func TestParseSize(t *testing.T) {
	t.Parallel()
	ok := map[string]int64{
		"0B":        0,
		"1B":        1,
		"1b":        1,
		"10kB":      10_000,
		"10Kb":      10_000,
		"10kb":      10_000,
		"10KB":      10 << 10, // exactly "KB" is KiB
		"10KiB":     10 << 10,
		"10kib":     10 << 10,
		"10KIB":     10 << 10,
		"256KiB":    256 << 10,
		"1MB":       1_000_000,
		"1mb":       1_000_000,
		"1MiB":      1 << 20,
		"1GB":       1_000_000_000,
		"1GiB":      1 << 30,
		"1TB":       1e12,
		"1TiB":      1 << 40,
		"1PB":       1e15,
		"1PiB":      1 << 50,
		"1EB":       1e18,
		"1.5KiB":    1536,
		"1.5 KiB":   1536,
		"1   kB":    1000,
		"1kB ":      1000,
		"1kB\t":     1000,
		".5kB":      500,
		"5.kB":      5000,
		"0.0001kB":  0,
		"2.9999B":   2,
		"007MB":     7_000_000,
		"1.25 MiB":  1_310_720,
		"999999 B":  999_999,
		"1048576 B": 1 << 20,
		"1\u00a0kB": 1000, // Unicode space, as Rust's trim
	}
	for in, want := range ok {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, nil", in, got, err, want)
		}
	}
	bad := []string{
		"", "1", "1024", "0", "1.5", "kB", " 1kB", "-1kB", "+1kB", "1..5kB", "1.2.3kB", ".kB", ".",
		"1 k", "1KBB", "1 kilobyte", "1k B", "1e3B", "1_000B", "1,5kB", "10EiB", "1ZB", "1YiB",
		"100000000000000000000 B", "1kB 2kB", "١kB", "8EiB",
	}
	for _, in := range bad {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, nil; want an error", in, got)
		}
	}
	if _, err := ParseSize("1024"); err == nil || err.Error() != "Unable to parse size '1024'" {
		t.Errorf("ParseSize(1024) error = %v, want Unable to parse size '1024'", err)
	}
}

func TestParseLevel(t *testing.T) {
	t.Parallel()
	ok := map[string]slog.Level{
		"error": slog.LevelError, "ERROR": slog.LevelError, "Warn": slog.LevelWarn, "info": slog.LevelInfo,
		"INFO": slog.LevelInfo, "debug": slog.LevelDebug, "TrAcE": LevelTrace,
	}
	for in, want := range ok {
		got, err := ParseLevel(in)
		if err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v", in, got, err, want)
		}
		if name := LevelName(got); name != lower(in) {
			t.Errorf("LevelName(%v) = %q, want %q", got, name, lower(in))
		}
	}
	for _, in := range []string{"", "warning", "fatal", "off", " info", "info "} {
		_, err := ParseLevel(in)
		if err == nil || err.Error() != "Invalid log level: "+in {
			t.Errorf("ParseLevel(%q) error = %v, want Invalid log level: %s", in, err, in)
		}
	}
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
