package push

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/ocyless/ocyless/shared/config"
)

// Mode says where the server runs, which decides what an empty
// allowed_hosts means and whether plain http:// targets are allowed.
type Mode int

const (
	// Local: the all-in-one server. Unset allowed_hosts means loopback only
	// (localhost, 127.0.0.0/8, ::1); http:// and https:// are allowed.
	Local Mode = iota
	// AWS: the deployed functions. Unset allowed_hosts means no target at
	// all; only https:// is allowed.
	AWS
)

// Resolver looks up a host's addresses; *net.Resolver is one. Tests give
// their own to check what happens after DNS resolution.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Policy is `[push] allowed_hosts` with the rules no setting can lift:
// link-local, cloud metadata, unspecified and multicast addresses are
// refused, before and after DNS resolution. It checks URLs when a setting
// is written (CheckURL) and every address the delivery dials (Transport).
type Policy struct {
	mode      Mode
	hosts     []config.HostPort // nil: the mode's default
	allowHTTP bool
	// Resolver resolves target names at dial time (default
	// net.DefaultResolver).
	Resolver Resolver
}

// NewPolicy builds the policy from the allowed_hosts entries ("host" or
// "host:port", as [server] allowed_hosts) and the mode. An empty list means
// loopback only in Local mode and nothing in AWS mode; a non-empty one
// means exactly those hosts (a "host" entry allows every port, a
// "host:port" entry that port only). An entry naming a forbidden address is
// refused.
func NewPolicy(allowedHosts []string, mode Mode) (*Policy, error) {
	p := &Policy{mode: mode, allowHTTP: mode == Local, Resolver: net.DefaultResolver}
	for i, e := range allowedHosts {
		h, err := config.ParseHostPort(strings.TrimSpace(e))
		if err != nil {
			return nil, fmt.Errorf("push allowed_hosts: entry %d %q: %v", i+1, e, err)
		}
		if a, err := netip.ParseAddr(h.Host); err == nil {
			if why := p.forbidden(a); why != "" {
				return nil, fmt.Errorf("push allowed_hosts: entry %d %q: %s addresses are never allowed", i+1, e, why)
			}
		} else if mode == AWS && h.Host == "localhost" {
			return nil, fmt.Errorf("push allowed_hosts: entry %d %q: loopback addresses are never allowed on AWS", i+1, e)
		}
		p.hosts = append(p.hosts, h)
	}
	return p, nil
}

// AllowHTTP allows or refuses plain http:// targets (default: allowed in
// Local mode, refused in AWS mode).
func (p *Policy) AllowHTTP(ok bool) { p.allowHTTP = ok }

// loopbackOnly reports whether the policy is the Local default.
func (p *Policy) loopbackOnly() bool { return p.hosts == nil && p.mode == Local }

// CheckURL checks a target URL at validation time: scheme, no user
// information, no fragment, and the host allowed. The error text is the
// reason alone ("Invalid push: " is added by the caller); it never repeats
// the URL's query or user information. A nil policy checks syntax only.
func (p *Policy) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return errors.New("url must be an absolute http:// or https:// URL")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if p != nil && !p.allowHTTP {
			return errors.New("url must use https://")
		}
	default:
		return errors.New("url must be an absolute http:// or https:// URL")
	}
	if u.User != nil {
		return errors.New("url must not carry user information")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return errors.New("url must not have a fragment")
	}
	if len(raw) > 2048 {
		return errors.New("url is longer than 2048 bytes")
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	hp, err := config.ParseHostPort(hostForParse(host) + ":" + port)
	if err != nil {
		return fmt.Errorf("url host: %v", err)
	}
	if p == nil {
		if a, err := netip.ParseAddr(hp.Host); err == nil {
			if why := forbidden(a); why != "" {
				return fmt.Errorf("target %s is a %s address", hp.Host, why)
			}
		}
		return nil
	}
	if a, err := netip.ParseAddr(hp.Host); err == nil {
		if why := p.forbidden(a); why != "" {
			return fmt.Errorf("target %s is a %s address", hp.Host, why)
		}
	}
	return p.allowedHost(hp)
}

func hostForParse(h string) string {
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}

// allowedHost applies allowed_hosts to a canonical host and port.
func (p *Policy) allowedHost(hp config.HostPort) error {
	if p.hosts == nil {
		if p.mode == AWS {
			return errors.New("no push targets are allowed: set [push] allowed_hosts")
		}
		if hp.Host == "localhost" {
			return nil
		}
		if a, err := netip.ParseAddr(hp.Host); err == nil && a.Unmap().IsLoopback() {
			return nil
		}
		return fmt.Errorf("host %s is not allowed: only loopback targets are allowed unless [push] allowed_hosts lists the host", hp.Host)
	}
	for _, h := range p.hosts {
		if h.Host == hp.Host && (h.Port == "" || h.Port == hp.Port) {
			return nil
		}
	}
	return fmt.Errorf("host %s is not in [push] allowed_hosts", hostForParse(hp.Host)+":"+hp.Port)
}

// Well-known metadata addresses outside 169.254.0.0/16 and fe80::/10.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("fd00:ec2::254"),   // AWS IMDS over IPv6
	netip.MustParseAddr("fd00:ec2::23"),    // AWS Route 53 resolver over IPv6
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
	netip.MustParseAddr("192.0.0.192"),     // Oracle Cloud
}

var (
	linkLocal4 = netip.MustParsePrefix("169.254.0.0/16")
	linkLocal6 = netip.MustParsePrefix("fe80::/10")
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	v4compat   = netip.MustParsePrefix("::/96")
)

// forbidden names why an address may never be a target, or "".
// IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64
// (64:ff9b::a.b.c.d) forms are judged by the IPv4 address they carry.
func forbidden(a netip.Addr) string {
	a = a.WithZone("")
	if a.Is4In6() {
		return forbidden(a.Unmap())
	}
	if a.Is6() && (nat64.Contains(a) || (v4compat.Contains(a) && a != netip.IPv6Unspecified() && a != netip.IPv6Loopback())) {
		b := a.As16()
		return forbidden(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	}
	for _, m := range metadataAddrs {
		if a == m {
			return "cloud metadata"
		}
	}
	switch {
	case linkLocal4.Contains(a) || linkLocal6.Contains(a):
		return "link-local"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsMulticast() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "multicast or broadcast"
	}
	return ""
}

// forbidden adds the mode's own rule to the global ones: on AWS, loopback
// addresses are refused too (the Lambda Runtime API and extensions listen
// there, and a listed name could be made to resolve to them).
func (p *Policy) forbidden(a netip.Addr) string {
	if why := forbidden(a); why != "" {
		return why
	}
	if p.mode == AWS && a.Unmap().IsLoopback() {
		return "loopback"
	}
	return ""
}

// checkDialAddr judges an address the delivery is about to connect to.
func (p *Policy) checkDialAddr(a netip.Addr) error {
	if why := p.forbidden(a); why != "" {
		return &refusedError{msg: fmt.Sprintf("address %s is %s", a.Unmap(), why)}
	}
	if p.loopbackOnly() && !a.Unmap().IsLoopback() {
		return &refusedError{msg: fmt.Sprintf("address %s is not loopback (only loopback targets are allowed)", a.Unmap())}
	}
	return nil
}

// refusedError is a dial the policy refused.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return "target refused: " + e.msg }

// DialContext resolves addr's host with the policy's Resolver, refuses it
// unless every address passes, and connects to the checked addresses only
// (no second lookup, so a name cannot change its answer in between). The
// dialer's Control checks the final address again.
func (p *Policy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		r := p.Resolver
		if r == nil {
			r = net.DefaultResolver
		}
		addrs, err = r.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		}
	}
	for _, a := range addrs {
		if err := p.checkDialAddr(a); err != nil {
			return nil, err
		}
	}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: p.control}
	var firstErr error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

// control is the net.Dialer hook: the last word on the address connected.
func (p *Policy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &refusedError{msg: "unparsable address"}
	}
	return p.checkDialAddr(ap.Addr())
}

// Transport is an http.Transport that dials through the policy, ignores
// proxy settings of the environment (a proxy would hide the target's
// address) and keeps connections per host.
func (p *Policy) Transport() *http.Transport {
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            p.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    16,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
}

// redactURL keeps scheme, host and path: user information and the query
// may carry credentials and never reach a log.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid url)"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}
