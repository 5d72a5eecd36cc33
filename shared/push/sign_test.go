package push

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestSignVerify(t *testing.T) {
	secret := []byte(testSecret)
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"id":1,"attempt":1,"queue":"q","input":null}`)
	h := Sign(secret, now, body)
	if !strings.HasPrefix(h, "t=1800000000,v1=") || len(h) != len("t=1800000000,v1=")+64 {
		t.Fatalf("header %q", h)
	}
	verifyIndependently(t, h, body, testSecret, now.Unix())
	other := Sign([]byte("another-secret-0123"), now, body)
	_, otherSig, _ := strings.Cut(other, ",")

	cases := []struct {
		name   string
		secret []byte
		header string
		body   []byte
		now    time.Time
		want   error
	}{
		{"valid", secret, h, body, now, nil},
		{"valid at the tolerance's edge", secret, h, body, now.Add(DefaultTolerance), nil},
		{"spaces and order", secret, " v1=" + h[len("t=1800000000,v1="):] + " , t=1800000000 ", body, now, nil},
		{"rotation: second v1 matches", secret, other + "," + h[len("t=1800000000,"):], body, now, nil},
		{"body changed", secret, h, append([]byte{' '}, body...), now, ErrSignatureMismatch},
		{"wrong secret", []byte("another-secret-0123"), h, body, now, ErrSignatureMismatch},
		{"other key's signature", secret, "t=1800000000," + otherSig, body, now, ErrSignatureMismatch},
		{"time changed", secret, strings.Replace(h, "t=1800000000", "t=1800000001", 1), body, now, ErrSignatureMismatch},
		{"too old", secret, h, body, now.Add(DefaultTolerance + time.Second), ErrSignatureOutOfTime},
		{"from the future", secret, h, body, now.Add(-DefaultTolerance - time.Second), ErrSignatureOutOfTime},
		{"empty", secret, "", body, now, ErrSignatureMissing},
		{"no v1", secret, "t=1800000000", body, now, ErrSignatureMissing},
		{"short v1", secret, "t=1800000000,v1=abcd", body, now, ErrSignatureMissing},
		{"bad t", secret, strings.Replace(h, "t=1800000000", "t=soon", 1), body, now, ErrSignatureMissing},
	}
	for _, c := range cases {
		if err := Verify(c.secret, c.header, c.body, c.now, 0); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// TestDocSnippetsVerify runs the Python and Node verification snippets of
// docs/push.md against signatures this package makes: the documentation's
// code is checked, by implementations independent of this one.
func TestDocSnippetsVerify(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "push.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := func(lang string) string {
		m := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```").FindStringSubmatch(string(doc))
		if m == nil {
			t.Fatalf("docs/push.md has no %s block", lang)
		}
		return m[1]
	}
	drivers := map[string]struct {
		bin, ext, driver string
	}{
		"python": {"python3", "py", `
import sys
secret, header, body = (open(p, "rb").read() for p in sys.argv[1:4])
print("ok" if verify(secret, header.decode(), body) else "bad")
`},
		"js": {"node", "js", `
const fs = require("node:fs");
const [secret, header, body] = process.argv.slice(2, 5).map((p) => fs.readFileSync(p));
console.log(verify(secret, header.toString(), body) ? "ok" : "bad");
`},
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	body := []byte("{\"id\":9,\"attempt\":2,\"queue\":\"q\",\"input\":{\"text\":\"h\u00e9llo \\u2603\"}}")
	secretFile := write("secret", []byte(testSecret))
	bodyFile := write("body", body)
	good := write("good", []byte(Sign([]byte(testSecret), time.Now(), body)))
	tampered := write("tampered", []byte(Sign([]byte(testSecret), time.Now(), append(body, ' '))))
	old := write("old", []byte(Sign([]byte(testSecret), time.Now().Add(-10*time.Minute), body)))
	for lang, d := range drivers {
		t.Run(lang, func(t *testing.T) {
			bin, err := exec.LookPath(d.bin)
			if err != nil {
				if os.Getenv("CI") == "true" {
					t.Fatalf("%s is not installed", d.bin)
				}
				t.Skipf("%s is not installed: the %s snippet of docs/push.md is not checked", d.bin, lang)
			}
			script := write("verify."+d.ext, []byte(block(lang)+d.driver))
			for header, want := range map[string]string{good: "ok", tampered: "bad", old: "bad"} {
				out, err := exec.Command(bin, script, secretFile, header, bodyFile).CombinedOutput()
				if err != nil || strings.TrimSpace(string(out)) != want {
					t.Errorf("%s %s: %s %v, want %s", lang, filepath.Base(header), out, err, want)
				}
			}
		})
	}
}
