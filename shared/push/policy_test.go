package push

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestPolicyCheckURL(t *testing.T) {
	local := localPolicy(t)
	aws, err := NewPolicy(nil, AWS)
	if err != nil {
		t.Fatal(err)
	}
	awsListed, err := NewPolicy([]string{"api.example.com", "hooks.example.com:8443", "10.0.0.7"}, AWS)
	if err != nil {
		t.Fatal(err)
	}
	localListed, err := NewPolicy([]string{"worker.internal:9000"}, Local)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		pol  *Policy
		url  string
		want string // "" = allowed, else a substring of the reason
	}{
		{local, "http://127.0.0.1:8080/run", ""},
		{local, "http://127.9.9.9/", ""},
		{local, "https://localhost/", ""},
		{local, "http://LOCALHOST:1/", ""},
		{local, "http://[::1]:9000/", ""},
		{local, "http://[::ffff:127.0.0.1]:9000/", ""},
		{local, "http://example.com/", "only loopback targets are allowed"},
		{local, "http://10.0.0.1/", "only loopback targets are allowed"},
		{local, "http://169.254.169.254/latest/meta-data/", "link-local"},
		{local, "http://169.254.1.2:80/", "link-local"},
		{local, "http://[fe80::1]/", "link-local"},
		{local, "http://[::ffff:169.254.169.254]/", "link-local"},
		{local, "http://[::ffff:a9fe:a9fe]/", "link-local"},
		{local, "http://[64:ff9b::169.254.169.254]/", "link-local"},
		{local, "http://[fd00:ec2::254]/", "cloud metadata"},
		{local, "http://100.100.100.200/", "cloud metadata"},
		{local, "http://192.0.0.192/", "cloud metadata"},
		{local, "http://0.0.0.0:80/", "unspecified"},
		{local, "http://[::]:80/", "unspecified"},
		{local, "http://224.0.0.1/", "multicast"},
		{local, "ftp://127.0.0.1/", "http:// or https://"},
		{local, "/relative", "http:// or https://"},
		{local, "127.0.0.1:80", "http:// or https://"},
		{local, "http://user:hunter2@127.0.0.1/", "user information"},
		{local, "http://127.0.0.1/#frag", "fragment"},
		{local, "http://bad_host..x/", "url host"},
		{local, "http://127.0.0.1:0/", "port"},
		{aws, "https://api.example.com/", "no push targets are allowed"},
		{aws, "https://127.0.0.1/", "target 127.0.0.1 is a loopback address"},
		{awsListed, "https://api.example.com/jobs", ""},
		{awsListed, "https://API.Example.com:444/jobs", ""},
		{awsListed, "http://api.example.com/jobs", "https://"},
		{awsListed, "https://hooks.example.com:8443/", ""},
		{awsListed, "https://hooks.example.com/", "not in [push] allowed_hosts"},
		{awsListed, "https://10.0.0.7/", ""},
		{awsListed, "https://evil.example.com/", "not in [push] allowed_hosts"},
		{awsListed, "https://169.254.169.254/", "link-local"},
		{awsListed, "https://127.0.0.1/", "is a loopback address"},
		{awsListed, "https://[::1]/", "is a loopback address"},
		{local, "http://0x7f.1/", "only loopback targets are allowed"},
		{local, "http://2130706433/", "url host"},
		{local, "http://[fe80::1%25eth0]/", "url host"},
		{localListed, "http://worker.internal:9000/", ""},
		{localListed, "http://127.0.0.1:9000/", "not in [push] allowed_hosts"}, // a list replaces the loopback default
	}
	for _, c := range cases {
		err := c.pol.CheckURL(c.url)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.url, err)
		case c.want != "" && err == nil:
			t.Errorf("%s: allowed, want refused (%s)", c.url, c.want)
		case c.want != "" && !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: %q, want it to say %q", c.url, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the password is in the reason: %v", c.url, err)
		}
	}
}

func TestNewPolicyRefusesForbiddenEntries(t *testing.T) {
	for _, e := range []string{"169.254.169.254", "[fe80::1]:80", "[fd00:ec2::254]", "100.100.100.200:80", "http://x", "a..b", "127.0.0.1", "localhost:8080", "[::1]"} {
		if _, err := NewPolicy([]string{"ok.example", e}, AWS); err == nil || !strings.Contains(err.Error(), "entry 2") {
			t.Errorf("%q: %v", e, err)
		}
	}
	if _, err := NewPolicy([]string{"localhost:8080", "127.0.0.1"}, Local); err != nil {
		t.Errorf("loopback entries locally: %v", err)
	}
}

// TestPolicyRefusesAfterDNS: a name allowed by allowed_hosts (or the
// loopback default) that resolves to a forbidden address is refused when
// it is dialled, before any connection; the allowed name that resolves to
// a good address is delivered to.
func TestPolicyRefusesAfterDNS(t *testing.T) {
	var hits atomic.Int32
	srv, _ := endpoint(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1); io.WriteString(w, `{"ok":1}`) })
	_, p, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	resolver := fakeResolver{
		"metadata.test":   {"169.254.169.254"},
		"mapped.test":     {"::ffff:169.254.169.254"},
		"v6meta.test":     {"fd00:ec2::254"},
		"linklocal6.test": {"fe80::1"},
		"alibaba.test":    {"100.100.100.200"},
		"nat64.test":      {"64:ff9b::a9fe:a9fe"},
		"mixed.test":      {"127.0.0.1", "169.254.10.10"},
		"ok.test":         {"127.0.0.1"},
		"localhost":       {"10.1.2.3"}, // a poisoned hosts file or resolver
	}
	listed, err := NewPolicy([]string{"metadata.test", "mapped.test", "v6meta.test", "linklocal6.test", "alibaba.test", "nat64.test", "mixed.test", "ok.test"}, Local)
	if err != nil {
		t.Fatal(err)
	}
	listed.Resolver = resolver
	loopback := localPolicy(t)
	loopback.Resolver = resolver
	awsOK := mustPolicy(t, []string{"ok.test"}, AWS)
	awsOK.Resolver = resolver
	awsOK.AllowHTTP(true)

	cases := []struct {
		pol  *Policy
		host string
		want string
	}{
		{listed, "metadata.test", "address 169.254.169.254 is link-local"},
		{listed, "mapped.test", "address 169.254.169.254 is link-local"},
		{listed, "v6meta.test", "address fd00:ec2::254 is cloud metadata"},
		{listed, "linklocal6.test", "address fe80::1 is link-local"},
		{listed, "alibaba.test", "address 100.100.100.200 is cloud metadata"},
		{listed, "nat64.test", "address 64:ff9b::a9fe:a9fe is link-local"},
		{listed, "mixed.test", "address 169.254.10.10 is link-local"},
		{loopback, "localhost", "address 10.1.2.3 is not loopback"},
		{awsOK, "ok.test", "address 127.0.0.1 is loopback"},
	}
	for _, c := range cases {
		if err := c.pol.CheckURL("http://" + c.host + ":" + p + "/"); err != nil {
			t.Fatalf("%s: refused at validation (the test needs it allowed by name): %v", c.host, err)
		}
		d := newDeliverer(t, Options{Policy: c.pol})
		o := d.Deliver(context.Background(), Delivery{Target: testTarget("http://"+c.host+":"+p+"/", 1), Jobs: []Job{job(1, `1`)}, Timeout: 5 * time.Second})[0]
		if o.Result != Failed || o.Error.Group != GroupUnreachable || !strings.Contains(o.Error.Message, "target refused: "+c.want) {
			t.Errorf("%s: %v %+v, want refused with %q", c.host, o.Result, o.Error, c.want)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("refused targets reached the server %d times", n)
	}
	d := newDeliverer(t, Options{Policy: listed})
	o := d.Deliver(context.Background(), Delivery{Target: testTarget("http://ok.test:"+p+"/", 1), Jobs: []Job{job(1, `1`)}, Timeout: 5 * time.Second})[0]
	if o.Result != Completed || hits.Load() != 1 {
		t.Fatalf("ok.test: %v %+v, %d hits", o.Result, o.Error, hits.Load())
	}
}

// TestPolicyCheckedAtDelivery: a target stored while allowed but no longer
// in allowed_hosts (or made in Go without validation) is refused when
// delivered, with no connection.
func TestPolicyCheckedAtDelivery(t *testing.T) {
	var hits atomic.Int32
	srv, _ := endpoint(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
	narrowed, err := NewPolicy([]string{"other.example"}, Local)
	if err != nil {
		t.Fatal(err)
	}
	for name, pol := range map[string]*Policy{"list without the host": narrowed, "AWS default": mustPolicy(t, nil, AWS)} {
		o := newDeliverer(t, Options{Policy: pol}).Deliver(context.Background(), Delivery{Target: testTarget(srv.URL, 1), Jobs: []Job{job(1, `1`)}, Timeout: 5 * time.Second})[0]
		if o.Result != Failed || o.Error.Group != GroupUnreachable || !strings.HasPrefix(o.Error.Message, "target refused: ") {
			t.Errorf("%s: %v %+v", name, o.Result, o.Error)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("%d hits", hits.Load())
	}
}

// TestPolicyControlRefusesDirectDial: the dialer's Control hook refuses a
// forbidden address even when the caller dials an IP literal directly.
func TestPolicyControlRefusesDirectDial(t *testing.T) {
	pol := mustPolicy(t, []string{"anything.example"}, Local)
	for _, addr := range []string{"169.254.169.254:80", "[fe80::1%lo]:80", "[::ffff:169.254.169.254]:80", "100.100.100.200:80"} {
		_, err := pol.DialContext(context.Background(), "tcp", addr)
		if err == nil || !strings.Contains(err.Error(), "target refused") {
			t.Errorf("%s: %v", addr, err)
		}
		if err := pol.control("tcp", addr, nil); err == nil {
			t.Errorf("control(%s) allowed", addr)
		}
	}
}

func mustPolicy(t *testing.T, hosts []string, m Mode) *Policy {
	t.Helper()
	p, err := NewPolicy(hosts, m)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
