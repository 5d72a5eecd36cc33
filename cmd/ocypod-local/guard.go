package main

import (
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/ocyless/ocyless/shared/config"
)

// hostGuard keeps web pages in the user's browser away from the API. The
// API has no authentication, so without it a page on any site could take
// or rewrite jobs: directly (a cross-site request to 127.0.0.1) or by DNS
// rebinding (its own name re-pointed at 127.0.0.1). It refuses, with 403:
//   - a Host header outside the allowed set (rebinding), when there is a set;
//   - an Origin header (sent by browsers on cross-origin fetches and on
//     every POST, PUT, PATCH and DELETE) naming a host outside the allowed
//     set, or, without a set, other than the request's own Host; and
//     "Origin: null" (sandboxed frames, file: pages);
//   - a request without Origin that the browser marks Sec-Fetch-Site:
//     cross-site (links, images, scripts and frames of another site).
//
// Clients that are not browsers send neither Origin nor Sec-Fetch-Site and
// only meet the Host check.
type hostGuard struct {
	allowed []config.HostPort // nil: any Host
	next    http.Handler
	// passed is the last Host header, as sent, that allowed accepted: a
	// client sends the same one with every request, which then skips
	// parsing it (an IP address is parsed and written again).
	passed atomic.Pointer[string]
}

// newHostGuard builds the guard for a server configured with s and
// listening on addr. Without server.allowed_hosts, a loopback listener
// accepts config.LoopbackHosts plus its own address; any other listener
// accepts every Host, which is logged as a warning.
func newHostGuard(s config.Server, addr net.Addr, next http.Handler, log *slog.Logger) *hostGuard {
	g := &hostGuard{next: next}
	names := s.AllowedHosts
	if len(names) == 0 {
		ip := listenIP(addr)
		if !ip.IsLoopback() {
			log.Warn("The server listens on a non-loopback address and server.allowed_hosts (OCYPOD_ALLOWED_HOSTS) is empty: "+
				"any Host header is accepted, so a web page could reach the API through DNS rebinding; "+
				"list the names clients use in allowed_hosts", slog.String("addr", addr.String()))
			return g
		}
		names = slices.Clone(config.LoopbackHosts)
		if own := (config.HostPort{Host: ip.String()}).String(); !slices.Contains(names, own) {
			names = append(names, own)
		}
	}
	for _, n := range names {
		// Entries are canonical (config validates them); a broken one
		// matches nothing rather than everything.
		if hp, err := config.ParseHostPort(n); err == nil {
			g.allowed = append(g.allowed, hp)
		}
	}
	if g.allowed == nil {
		g.allowed = []config.HostPort{}
	}
	log.Debug("Accepting requests for these Host names", slog.Any("allowed_hosts", names))
	return g
}

// listenIP is the IP address of a TCP listener (the zero Addr otherwise).
func listenIP(addr net.Addr) netip.Addr {
	if ta, ok := addr.(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(ta.IP); ok {
			return ip.Unmap()
		}
	}
	return netip.Addr{}
}

func (g *hostGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if msg := g.refusal(r); msg != "" {
		h := w.Header()
		h.Set("Content-Type", "text/plain; charset=utf-8")
		h.Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(msg))
		return
	}
	g.next.ServeHTTP(w, r)
}

// refusal is the 403 text for a request the guard refuses, "" otherwise.
// Header values are quoted and cut short: they come from the client.
func (g *hostGuard) refusal(r *http.Request) string {
	var host config.HostPort
	var hostErr error
	// host is only read below without an allowed set.
	if p := g.passed.Load(); g.allowed == nil || p == nil || *p != r.Host {
		host, hostErr = config.ParseHostPort(r.Host)
		if g.allowed != nil {
			if hostErr != nil || !g.allows(host) {
				return "Forbidden: Host " + quote(r.Host) + " is not allowed; list it in server.allowed_hosts (OCYPOD_ALLOWED_HOSTS) to accept it"
			}
			passed := r.Host
			g.passed.Store(&passed)
		}
	}
	if origins := r.Header.Values("Origin"); len(origins) > 0 {
		o := origins[0]
		if len(origins) > 1 || o == "null" {
			return "Forbidden: requests from a page without a usable origin (Origin: " + quote(strings.Join(origins, ", ")) + ") are refused"
		}
		oh, ok := originHost(o)
		switch {
		case !ok:
			return "Forbidden: malformed Origin header " + quote(o)
		case g.allowed != nil && g.allows(oh), g.allowed == nil && hostErr == nil && oh == host:
			return ""
		}
		return "Forbidden: cross-origin request from " + quote(o) + "; list its host in server.allowed_hosts (OCYPOD_ALLOWED_HOSTS) to accept it"
	}
	if strings.EqualFold(r.Header.Get("Sec-Fetch-Site"), "cross-site") {
		return "Forbidden: cross-site request from a web page (Sec-Fetch-Site: cross-site)"
	}
	return ""
}

// allows reports whether h is in the allowed set: same host, and same port
// unless the entry has none.
func (g *hostGuard) allows(h config.HostPort) bool {
	for _, a := range g.allowed {
		if a.Host == h.Host && (a.Port == "" || a.Port == h.Port) {
			return true
		}
	}
	return false
}

// originHost reads an Origin header as browsers send it:
// http[s]://host[:port], nothing more.
func originHost(o string) (config.HostPort, bool) {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return config.HostPort{}, false
	}
	h, err := config.ParseHostPort(u.Host)
	return h, err == nil
}

// quote shows a client-supplied value safely in a plain-text answer.
func quote(s string) string {
	const limit = 200
	if len(s) > limit {
		s = s[:limit] + "..."
	}
	return strconv.Quote(s)
}
