package redisstore

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// partCursor is where a partition's listing stands: source I (from 1),
// after member M.
type partCursor struct {
	I int    `json:"i"`
	M string `json:"m,omitempty"`
}

// cursor is a listing's position in every partition it covers (nil: that
// partition is done), bound to the query it belongs to.
type cursor struct {
	Query string        `json:"q"`
	Parts []*partCursor `json:"p"`
}

// cursorField is the field of the namespace's layout record ("{<ns>}:meta")
// that holds the key signing its cursors: 32 random bytes in hex, written
// once (HSETNX) by the first listing that needs a next cursor.
const cursorField = "cursor_key"

// cursorSecret caches the namespace's cursor key once read.
type cursorSecret struct {
	mu  sync.Mutex
	key []byte
}

// cursorKey returns the namespace's cursor key, creating it when create
// is set; nil (and no error) when there is none yet and create is not.
func (s *Store) cursorKey(ctx context.Context, create bool) ([]byte, error) {
	s.cursorSecret.mu.Lock()
	defer s.cursorSecret.mu.Unlock()
	if s.cursorSecret.key != nil {
		return s.cursorSecret.key, nil
	}
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	meta := "{" + s.l.ns + "}:" + keyMeta
	pipe := s.rdb.Pipeline()
	if create {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		pipe.HSetNX(ctx, meta, cursorField, hex.EncodeToString(b))
	}
	get := pipe.HGet(ctx, meta, cursorField)
	if _, err := pipe.Exec(ctx); err != nil && !isNil(err) {
		return nil, translate(err)
	}
	key, err := hex.DecodeString(get.Val())
	if get.Err() != nil || err != nil || len(key) < 16 {
		if create {
			return nil, ocypod.Internal(errCursorKey)
		}
		return nil, nil
	}
	s.cursorSecret.key = key
	return key, nil
}

var errCursorKey = errors.New("the namespace's cursor key is unreadable")

func (s *Store) encodeCursor(ctx context.Context, c cursor) (string, error) {
	key, err := s.cursorKey(ctx, true)
	if err != nil {
		return "", err
	}
	return sealCursor(key, c), nil
}

func (s *Store) decodeCursor(ctx context.Context, text, query string, sources []listSource, parts int) (cursor, error) {
	key, err := s.cursorKey(ctx, false)
	if err != nil {
		return cursor{}, err
	}
	if key == nil {
		return cursor{}, ocypod.Invalid("Invalid cursor: not a cursor of this server")
	}
	return openCursor(key, text, query, sources, parts)
}

// sealCursor is c's text: its JSON and an HMAC-SHA256 of it (the first 16
// bytes), both base64url.
func sealCursor(key []byte, c cursor) string {
	b, _ := json.Marshal(c)
	mac := hmac.New(sha256.New, key)
	mac.Write(b)
	return base64.RawURLEncoding.EncodeToString(b) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:16])
}

// openCursor reads a cursor text sealed with key for query, over sources
// in parts partitions: ocypod.Invalid ("Invalid cursor: ...") unless the
// signature holds and every position lies within its source.
func openCursor(key []byte, text, query string, sources []listSource, parts int) (cursor, error) {
	bad := func(why string) (cursor, error) { return cursor{}, ocypod.Invalid("Invalid cursor: " + why) }
	body, sig, ok := strings.Cut(text, ".")
	if !ok {
		return bad("not a cursor of this server")
	}
	b, err1 := base64.RawURLEncoding.DecodeString(body)
	want, err2 := base64.RawURLEncoding.DecodeString(sig)
	if err1 != nil || err2 != nil {
		return bad("not a cursor of this server")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write(b)
	if !hmac.Equal(mac.Sum(nil)[:16], want) {
		return bad("it was altered or is not of this server")
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil || len(c.Parts) != parts {
		return bad("not a cursor of this server")
	}
	if c.Query != query {
		return bad("it belongs to another query")
	}
	for _, p := range c.Parts {
		if p != nil && !p.within(sources) {
			return bad("a position is out of range")
		}
	}
	return c, nil
}

// within says whether p is a position list.lua can resume from: a source
// of the listing, and a member inside that source's range.
func (p *partCursor) within(sources []listSource) bool {
	if p.I < 1 || p.I > len(sources) {
		return false
	}
	src := sources[p.I-1]
	if p.M == "" {
		return true
	}
	if src.Merge != "" || src.MergeAll {
		// "<queue> <lp(id)>" (or just below one: see before).
		q, id, ok := strings.Cut(p.M, " ")
		return ok && q != "" && (src.MergeAll || q == src.Merge) && id != "" && !strings.ContainsAny(id, " ")
	}
	if src.Walk != "" {
		// "<queue> <code> ...": a member of that status in some queue.
		q, rest, ok := strings.Cut(p.M, " ")
		return ok && q != "" && !strings.ContainsAny(q, " ") && strings.HasPrefix(rest, src.Walk+" ")
	}
	return lexAbove(p.M, src.Lo) && lexBelow(p.M, src.Hi)
}

// lexAbove says whether m lies at or after ZRANGEBYLEX's lower bound lo.
func lexAbove(m, lo string) bool {
	switch {
	case lo == "-":
		return true
	case strings.HasPrefix(lo, "["):
		return m >= lo[1:]
	case strings.HasPrefix(lo, "("):
		return m > lo[1:]
	}
	return false
}

// lexBelow says whether m lies at or before ZRANGEBYLEX's upper bound hi.
func lexBelow(m, hi string) bool {
	switch {
	case hi == "+":
		return true
	case strings.HasPrefix(hi, "["):
		return m <= hi[1:]
	case strings.HasPrefix(hi, "("):
		return m < hi[1:]
	}
	return false
}
