package config

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// HostPort is a host name or IP address with an optional port, in the
// canonical form the local server compares: names in lower case, IP
// addresses in their shortest form, IPv6 without brackets, and Port "" when
// none was given (or the decimal port without leading zeros).
type HostPort struct {
	Host string
	Port string
}

// String is the canonical text: host, host:port, [v6] or [v6]:port.
func (h HostPort) String() string {
	host := h.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if h.Port == "" {
		return host
	}
	return host + ":" + h.Port
}

// LoopbackHosts are the names the local server accepts in a Host header
// when it listens on a loopback address and server.allowed_hosts is empty.
var LoopbackHosts = []string{"localhost", "127.0.0.1", "[::1]"}

// ParseHostPort reads "name", "name:port", an IPv4 address with an optional
// port, "[v6]", "[v6]:port" or a bare IPv6 address. Names are DNS labels of
// letters, digits, '-' and '_' (at most 63 bytes each, 253 in all, no
// trailing dot); ports are 1..65535. Schemes, paths, user information and
// wildcards are refused. The error says what is wrong without naming a
// configuration key.
func ParseHostPort(s string) (HostPort, error) {
	if s == "" {
		return HostPort{}, errors.New("empty host")
	}
	if strings.Contains(s, "://") {
		return HostPort{}, errors.New("a host name, not a URL: leave out the scheme")
	}
	if strings.ContainsAny(s, "/@*?#\\ \t\r\n") {
		return HostPort{}, errors.New("a host name with an optional port only: no path, user, wildcard or spaces")
	}
	host, port := s, ""
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return HostPort{}, errors.New("missing ']' after the IPv6 address")
		}
		host = s[1:end]
		rest := s[end+1:]
		if rest != "" {
			if !strings.HasPrefix(rest, ":") {
				return HostPort{}, errors.New("only ':port' may follow ']'")
			}
			port = rest[1:]
			if port == "" {
				return HostPort{}, errors.New("empty port after ':'")
			}
		}
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return HostPort{}, errors.New("not an IPv6 address between '[' and ']'")
		}
		host = a.String()
	case strings.Count(s, ":") > 1:
		a, err := netip.ParseAddr(s)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return HostPort{}, errors.New("not an IPv6 address (write an IPv6 address with a port as [addr]:port)")
		}
		host = a.String()
	default:
		if i := strings.IndexByte(s, ':'); i >= 0 {
			host, port = s[:i], s[i+1:]
			if port == "" {
				return HostPort{}, errors.New("empty port after ':'")
			}
		}
		if a, err := netip.ParseAddr(host); err == nil {
			if !a.Is4() {
				return HostPort{}, errors.New("write an IPv6 address in brackets: [addr]")
			}
			host = a.String()
		} else if err := checkName(host); err != nil {
			return HostPort{}, err
		}
		host = strings.ToLower(host)
	}
	if port != "" {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 || strings.HasPrefix(port, "+") {
			return HostPort{}, errors.New("the port must be a number in 1..65535")
		}
		port = strconv.FormatUint(n, 10)
	}
	return HostPort{Host: host, Port: port}, nil
}

// checkName accepts a DNS name of letters, digits, '-' and '_' labels. A
// name made of digits and dots only would be a malformed IPv4 address.
func checkName(name string) error {
	if name == "" {
		return errors.New("empty host name")
	}
	if len(name) > 253 {
		return errors.New("host name longer than 253 bytes")
	}
	allDigits := true
	for label := range strings.SplitSeq(name, ".") {
		if label == "" {
			return errors.New("empty label in host name (no leading, trailing or double dots)")
		}
		if len(label) > 63 {
			return errors.New("host name label longer than 63 bytes")
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			switch {
			case c >= '0' && c <= '9':
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '-', c == '_':
				allDigits = false
			default:
				return fmt.Errorf("invalid character %q in host name", c)
			}
		}
	}
	if allDigits {
		return errors.New("not a valid IPv4 address")
	}
	return nil
}

// parseAllowedHosts checks and canonicalises server.allowed_hosts entries.
// Its errors name the entry; the caller adds the key or variable.
func parseAllowedHosts(entries []string) ([]string, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	out := make([]string, 0, len(entries))
	for i, e := range entries {
		h, err := ParseHostPort(strings.TrimSpace(e))
		if err != nil {
			return nil, fmt.Errorf("entry %d %q: %v; expected a host name or IP address with an optional port, such as \"queue.example\" or \"queue.example:8023\"",
				i+1, e, err)
		}
		out = append(out, h.String())
	}
	return out, nil
}

// parseAllowedHostsList reads OCYPOD_ALLOWED_HOSTS: entries separated by
// commas, spaces around them ignored, empty entries refused.
func parseAllowedHostsList(v string) ([]string, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	return parseAllowedHosts(strings.Split(v, ","))
}
