package redisstore

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redistest"
)

// TestCursorPositionsRangeChecked: a cursor signed with the namespace's
// key but edited to a position outside its listing (a source that does
// not exist, a member outside the source's range, another partition count)
// is a 400, never a 500 or a page of another queue. Four partitions.
func TestCursorPositionsRangeChecked(t *testing.T) {
	t.Parallel()
	s, err := New(redistest.Shared(t).Client(), Options{Namespace: redistest.Namespace(t), Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutQueue(ctx, "q", ocypod.DefaultQueueSettings()); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.CreateJob(ctx, "q", ocypod.JobSpec{}); err != nil {
			t.Fatal(err)
		}
	}
	req := ocypod.ListRequest{Limit: 1}
	page, err := s.ListJobs(ctx, req)
	if err != nil || page.NextCursor == "" {
		t.Fatalf("first page = %+v, %v", page, err)
	}
	key, err := s.cursorKey(ctx, false)
	if err != nil || len(key) != 32 {
		t.Fatalf("cursor key = %x, %v", key, err)
	}
	body, _, _ := strings.Cut(page.NextCursor, ".")
	var c cursor
	if err := json.Unmarshal(mustBase64(t, body), &c); err != nil {
		t.Fatal(err)
	}
	edit := func(f func(c *cursor)) string {
		e := cursor{Query: c.Query}
		for _, p := range c.Parts {
			if p != nil {
				p := *p
				e.Parts = append(e.Parts, &p)
			} else {
				e.Parts = append(e.Parts, nil)
			}
		}
		f(&e)
		return sealCursor(key, e)
	}
	first := func(c *cursor) *partCursor {
		for _, p := range c.Parts {
			if p != nil {
				return p
			}
		}
		t.Fatal("no partition left in the cursor")
		return nil
	}
	for name, text := range map[string]string{
		"source 0":          edit(func(c *cursor) { first(c).I = 0 }),
		"source 99":         edit(func(c *cursor) { first(c).I = 99 }),
		"negative source":   edit(func(c *cursor) { first(c).I = -1 }),
		"fewer partitions":  edit(func(c *cursor) { c.Parts = c.Parts[:1] }),
		"more partitions":   edit(func(c *cursor) { c.Parts = append(c.Parts, &partCursor{I: 1}) }),
		"another query":     edit(func(c *cursor) { c.Query = strings.Replace(c.Query, "null", "true", 1) }),
		"unsigned":          strings.SplitN(page.NextCursor, ".", 2)[0],
		"another signature": body + ".AAAAAAAAAAAAAAAAAAAAAA",
	} {
		_, err := s.ListJobs(ctx, ocypod.ListRequest{Limit: 1, Cursor: text})
		var oe *ocypod.Error
		if !errors.As(err, &oe) || oe.Kind != ocypod.KindInvalid || !strings.HasPrefix(oe.Message, "Invalid cursor: ") {
			t.Errorf("%s: ListJobs = %v, want 400 Invalid cursor", name, err)
		}
	}
	// A queue listing's sources are that queue's ranges: a member outside
	// them is refused.
	qreq := ocypod.ListRequest{Queue: "q", Status: ocypod.StatusQueued, Limit: 1}
	qpage, err := s.ListJobs(ctx, qreq)
	if err != nil || qpage.NextCursor == "" {
		t.Fatalf("queue page = %+v, %v", qpage, err)
	}
	body, _, _ = strings.Cut(qpage.NextCursor, ".")
	if err := json.Unmarshal(mustBase64(t, body), &c); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"a", "p q ", "q r a1 1", "zzz"} {
		qreq.Cursor = edit(func(c *cursor) { first(c).M = m })
		if _, err := s.ListJobs(ctx, qreq); ocypod.ErrorKind(err) != ocypod.KindInvalid {
			t.Errorf("member %q: ListJobs = %v, want 400", m, err)
		}
	}
}

func mustBase64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fuzzSources are the kinds of source a listing walks.
var fuzzSources = []listSource{
	{Index: "idx", Lo: "[q q ", Hi: "(q q!"},
	{Walk: "c"},
	{Index: "idx", Lo: "-", Hi: "+"},
	{Index: "tag", Lo: "[t!ax ", Hi: "(t!ax!"},
}

// FuzzOpenCursor: whatever text or signed body a client sends, openCursor
// never panics, answers only "Invalid cursor: ..." refusals, and accepts
// only positions list.lua can resume from: a source of the listing and a
// member within its range.
func FuzzOpenCursor(f *testing.F) {
	key := []byte("0123456789abcdef0123456789abcdef")
	const query = `["q","",false,"","",null,[]]`
	seal := func(c cursor) []byte { b, _ := json.Marshal(c); return b }
	f.Add(seal(cursor{Query: query, Parts: []*partCursor{{I: 1, M: "q q m a1 1"}, nil}}), "")
	f.Add(seal(cursor{Query: query, Parts: []*partCursor{{I: 2, M: "o0 c a5"}, {I: 4}}}), "")
	f.Add(seal(cursor{Query: query, Parts: []*partCursor{{I: 9, M: "x"}, {I: 0}}}), "")
	f.Add([]byte(`{"q":"`+strings.ReplaceAll(query, `"`, `\"`)+`","p":[{"i":1,"m":"p"},null]}`), "")
	f.Add([]byte(`{"q":1,"p":{}}`), "x.y")
	f.Add([]byte(nil), "eyJxIjoiIn0.AAAA")
	f.Fuzz(func(t *testing.T, body []byte, text string) {
		for _, in := range []string{text, sealCursor(key, cursor{}), sealRaw(key, body)} {
			c, err := openCursor(key, in, query, fuzzSources, 2)
			if err != nil {
				var oe *ocypod.Error
				if !errors.As(err, &oe) || oe.Kind != ocypod.KindInvalid || !strings.HasPrefix(oe.Message, "Invalid cursor: ") {
					t.Fatalf("openCursor(%q) = %v", in, err)
				}
				continue
			}
			if len(c.Parts) != 2 || c.Query != query {
				t.Fatalf("accepted %+v for another listing", c)
			}
			for _, p := range c.Parts {
				if p == nil {
					continue
				}
				if p.I < 1 || p.I > len(fuzzSources) {
					t.Fatalf("accepted source %d of %d", p.I, len(fuzzSources))
				}
				src := fuzzSources[p.I-1]
				var ok bool
				switch {
				case p.M == "":
					ok = true
				case src.Walk != "":
					f := strings.SplitN(p.M, " ", 3)
					ok = len(f) == 3 && f[0] != "" && f[1] == src.Walk
				case src.Lo == "-":
					ok = true
				default:
					ok = strings.HasPrefix(p.M, strings.TrimPrefix(src.Lo, "["))
				}
				if !ok {
					t.Fatalf("accepted member %q in source %+v", p.M, src)
				}
			}
		}
	})
}

// sealRaw signs body as sealCursor signs a cursor's JSON.
func sealRaw(key, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write(body)
	return base64.RawURLEncoding.EncodeToString(body) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:16])
}
