package config

import (
	"fmt"
	"strings"
	"testing"
)

// fmtAll prints c with every fmt verb a careless caller might use.
func fmtAll(c Config) string {
	return fmt.Sprintf("%v %+v %#v %s %v %+v %#v", c, c, c, c, c.Redis, c.Redis, c.Redis)
}

// FuzzParse feeds arbitrary files to the loader: it must never panic, and
// whatever it accepts must be valid and printable without the URL's
// password.
func FuzzParse(f *testing.F) {
	f.Add([]byte(fullFile), "")
	f.Add([]byte("[server]\nport = ${PORT=1}\nmax_body_size = \"1.5 KiB\""), "PORT")
	f.Add([]byte("[queue.a]\nretry_delays = [\"1s\", \"2m\"]\n[queue.\"b.c\"]\ntimeout = \"0s\""), "")
	f.Add([]byte("[redis]\nurl = \"redis://u:pw@h:1/2\"\nkey_namespace = \"x\""), "")
	f.Add([]byte("server = { port = 65535, log_level = \"TRACE\" }"), "X")
	f.Add([]byte("${A} ${B=} ${c}"), "A")
	f.Add([]byte("[[queue]]\n[server]\nshutdown_timeout = \"1000years\""), "")
	f.Fuzz(func(t *testing.T, data []byte, setVar string) {
		getenv := func(k string) (string, bool) {
			if k == setVar {
				return "9", true
			}
			return "", false
		}
		c, err := Parse(data, getenv)
		if err != nil {
			_ = err.Error()
			return
		}
		if verr := c.Validate(); verr != nil {
			t.Fatalf("Parse accepted an invalid config: %v", verr)
		}
		if c.Server.MaxBodySize <= 0 || c.Server.TimeoutCheckInterval <= 0 || c.Sweep.Batch <= 0 {
			t.Fatalf("Parse accepted %v", c)
		}
		_ = fmtAll(c) // must not panic; redaction is checked in TestSecretsNeverShown
	})
}

// FuzzInterpolate checks that interpolation never panics and that text
// without "${" comes back unchanged.
func FuzzInterpolate(f *testing.F) {
	for _, s := range []string{"", "${A}", "${A=}", "${A=x} ${A=y}", "${a}", "$${A}", "${A", "${A=${B}}", "${ÄB}", "x\x00${A}"} {
		f.Add(s, "A", "value")
	}
	f.Fuzz(func(t *testing.T, text, name, value string) {
		getenv := func(k string) (string, bool) {
			if k == name {
				return value, true
			}
			return "", false
		}
		out, err := Interpolate(text, getenv)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "could not interpolate environment variables into config, the following variables were not set: ") {
				t.Fatalf("Interpolate(%q) error = %v", text, err)
			}
			return
		}
		if !strings.Contains(text, "${") && out != text {
			t.Fatalf("Interpolate(%q) = %q, want it unchanged", text, out)
		}
	})
}

// FuzzParseSize checks that ParseSize never panics nor returns a negative
// size.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1KiB", "1.5 MB", "KB", "1", ".", "9999999999999999999999EiB", "1e3B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err == nil && n < 0 {
			t.Fatalf("ParseSize(%q) = %d", s, n)
		}
	})
}

// FuzzParseHostPort checks that host parsing never panics, that what it
// accepts is canonical (its String() parses back to the same value) and
// carries no character a Host header match could trip on.
func FuzzParseHostPort(f *testing.F) {
	for _, s := range []string{"localhost", "LOCALHOST:08023", "[::1]:1", "::1", "127.0.0.1:65535", "a_b.c-d", "[::ffff:1.2.3.4]",
		"1.2.3", "[fe80::1%25x]", "a:0", "http://a", "*.a", "a..b", "[::1]x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHostPort(s)
		if err != nil {
			return
		}
		again, err := ParseHostPort(h.String())
		if err != nil || again != h {
			t.Fatalf("ParseHostPort(%q) = %+v, whose String %q parses to %+v, %v", s, h, h.String(), again, err)
		}
		if h.Host == "" || strings.ContainsAny(h.String(), "/@*?# \t\r\n%") || h.Host != strings.ToLower(h.Host) {
			t.Fatalf("ParseHostPort(%q) accepted %+v", s, h)
		}
	})
}

// FuzzAllowedHostsList checks OCYPOD_ALLOWED_HOSTS parsing: no panic, and
// every accepted list is valid in a Config.
func FuzzAllowedHostsList(f *testing.F) {
	for _, s := range []string{"", " ", "localhost", "a, b:1 ,[::1]", "a,,b", ",", "http://x", "a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hosts, err := parseAllowedHostsList(s)
		if err != nil {
			return
		}
		c := Default()
		c.Server.AllowedHosts = hosts
		if err := c.Validate(); err != nil {
			t.Fatalf("parseAllowedHostsList(%q) = %q, which Validate refuses: %v", s, hosts, err)
		}
		if strings.TrimSpace(s) != "" && len(hosts) != strings.Count(s, ",")+1 {
			t.Fatalf("parseAllowedHostsList(%q) = %q: an entry was dropped", s, hosts)
		}
	})
}
