package push

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// FuzzDecodeTarget: any input is either a 400 with one of the setting's
// texts or a valid target whose public view hides the secret.
func FuzzDecodeTarget(f *testing.F) {
	for _, s := range []string{`null`, `{}`, `{"url": "http://127.0.0.1:1/"}`, `{"lambda": "f", "batch": 5, "timeout": "1m", "secret": "0123456789abcdef"}`,
		`{"url": "http://[::ffff:169.254.169.254]/"}`, `{"url": "http://localhost/", "x": 1}`, `[`, `{"batch": 1e400}`} {
		f.Add(s)
	}
	pol, err := NewPolicy(nil, Local)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		tg, err := DecodeTarget([]byte(in), pol)
		if err != nil {
			msg := ocypod.ErrorMessage(err)
			if ocypod.ErrorKind(err) != ocypod.KindInvalid || !(strings.HasPrefix(msg, "Invalid push: ") || strings.HasPrefix(msg, "Unknown field: push.")) {
				t.Fatalf("%q: %v", in, err)
			}
			return
		}
		if tg == nil {
			return
		}
		if err := tg.Validate(pol); err != nil {
			t.Fatalf("%q decoded but does not validate: %v", in, err)
		}
		b, err := json.Marshal(tg)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), string(tg.Secret.Bytes())) {
			t.Fatalf("public view %s shows the secret", b)
		}
	})
}

// FuzzVerify: Verify never panics, and what it accepts carries the real
// HMAC of the header's t and the body.
func FuzzVerify(f *testing.F) {
	now := time.Unix(1_800_000_000, 0)
	f.Add(Sign([]byte(testSecret), now, []byte("body")), []byte("body"))
	f.Add("t=1,v1=", []byte(""))
	f.Add("v1=00,t=-5,,=,t=1800000000", []byte("x"))
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		if Verify([]byte(testSecret), header, body, now, 0) != nil {
			return
		}
		var ts string
		for part := range strings.SplitSeq(header, ",") {
			if k, v, _ := strings.Cut(strings.TrimSpace(part), "="); k == "t" {
				ts = v
			}
		}
		mac := hmac.New(sha256.New, []byte(testSecret))
		mac.Write([]byte(ts + "."))
		mac.Write(body)
		// Hex digits of either case carry the same MAC.
		if !strings.Contains(strings.ToLower(header), "v1="+hex.EncodeToString(mac.Sum(nil))) {
			t.Fatalf("accepted a forged header %q", header)
		}
	})
}
