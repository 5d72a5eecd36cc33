package config

import (
	"strings"
	"testing"
)

func TestParseHostPort(t *testing.T) {
	t.Parallel()
	good := map[string]HostPort{
		"localhost":             {"localhost", ""},
		"LocalHost:8023":        {"localhost", "8023"},
		"127.0.0.1":             {"127.0.0.1", ""},
		"127.0.0.1:1":           {"127.0.0.1", "1"},
		"[::1]":                 {"::1", ""},
		"[::1]:65535":           {"::1", "65535"},
		"[0:0:0:0:0:0:0:1]:080": {"::1", "80"},
		"::1":                   {"::1", ""},
		"[::ffff:127.0.0.1]":    {"::ffff:127.0.0.1", ""},
		"a-b_c.example":         {"a-b_c.example", ""},
		"1a.example":            {"1a.example", ""},
		"x":                     {"x", ""},
	}
	for in, want := range good {
		got, err := ParseHostPort(in)
		if err != nil || got != want {
			t.Errorf("ParseHostPort(%q) = %+v, %v; want %+v", in, got, err, want)
			continue
		}
		if again, err := ParseHostPort(got.String()); err != nil || again != got {
			t.Errorf("ParseHostPort(%q) = %+v, %v; want it to read its own String() %q back", in, again, err, got.String())
		}
	}
	for _, in := range []string{
		"", ":", ":80", "a:", "a:0", "a:65536", "a:+1", "a:-1", "a:1:2", "http://a", "a/b", "user@a", "*.a", "a b",
		"[::1", "[]", "[::1]:", "[::1]x", "[a.b]", "[fe80::1%eth0]", "fe80::1%eth0", "1.2.3", "1.2.3.4.5", "300.1.1.1",
		"a..b", ".a", "a.", "ä", "a\x00", strings.Repeat("a", 64), strings.Repeat("a.", 127) + "a",
	} {
		if got, err := ParseHostPort(in); err == nil {
			t.Errorf("ParseHostPort(%q) = %+v, want an error", in, got)
		}
	}
}

func TestHostPortString(t *testing.T) {
	t.Parallel()
	for hp, want := range map[HostPort]string{
		{"localhost", ""}:   "localhost",
		{"localhost", "80"}: "localhost:80",
		{"::1", ""}:         "[::1]",
		{"::1", "8023"}:     "[::1]:8023",
	} {
		if got := hp.String(); got != want {
			t.Errorf("%+v.String() = %q, want %q", hp, got, want)
		}
	}
	for _, h := range LoopbackHosts {
		if p, err := ParseHostPort(h); err != nil || p.String() != h {
			t.Errorf("LoopbackHosts entry %q is not canonical: %+v, %v", h, p, err)
		}
	}
}

// TestValidateAllowedHosts covers a Config built in code: entries must be
// canonical, as the parsers leave them.
func TestValidateAllowedHosts(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"Localhost", "::1", "a:080", "", "http://a"} {
		c := Default()
		c.Server.AllowedHosts = []string{"ok", bad}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "server.allowed_hosts (OCYPOD_ALLOWED_HOSTS): entry 2") {
			t.Errorf("Validate with allowed_hosts %q = %v, want an error naming entry 2", bad, err)
		}
	}
}

func TestFormatSize(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0B", -1: "-1B", 1: "1B", 1000: "1000B", 1024: "1KiB", 1536 << 10: "1536KiB",
		512 << 20: "512MiB", 3 << 30: "3GiB", 1 << 40: "1TiB", 1<<20 + 1: "1048577B"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
		if n > 0 {
			if back, err := ParseSize(FormatSize(n)); err != nil || back != n {
				t.Errorf("ParseSize(FormatSize(%d)) = %d, %v", n, back, err)
			}
		}
	}
}
