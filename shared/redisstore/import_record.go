package redisstore

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// upstreamDelays reads Ocypod's retry_delays: a JSON array of durations in
// its own format ("10s", "1h 30m"), kept as whole seconds.
func upstreamDelays(text string) ([]ocypod.Duration, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal([]byte(text), &raw); err != nil {
		return nil, fmt.Errorf("retry_delays %q is not a JSON array", truncate(text))
	}
	out := make([]ocypod.Duration, len(raw))
	for i, r := range raw {
		var s string
		var n uint64
		switch {
		case json.Unmarshal(r, &s) == nil:
			d, err := ocypod.ParseDuration(s)
			if err != nil {
				return nil, fmt.Errorf("retry_delays[%d] %q: %v", i, s, err)
			}
			out[i] = d.Truncate()
		case json.Unmarshal(r, &n) == nil:
			out[i] = ocypod.Seconds(n)
		default:
			return nil, fmt.Errorf("retry_delays[%d] is not a duration", i)
		}
	}
	return out, nil
}

// importRecord is a job as import.lua writes it.
type importRecord struct {
	ID               string   `json:"id"`
	Queue            string   `json:"queue"`
	Status           string   `json:"status"`
	CreatedAt        string   `json:"created_at"`
	StartedAt        string   `json:"started_at,omitempty"`
	EndedAt          string   `json:"ended_at,omitempty"`
	LastHeartbeat    string   `json:"last_heartbeat,omitempty"`
	Timeout          luaUint  `json:"timeout"`
	HeartbeatTimeout luaUint  `json:"heartbeat_timeout"`
	ExpiresAfter     luaUint  `json:"expires_after"`
	Retries          luaUint  `json:"retries"`
	RetriesAttempted luaUint  `json:"retries_attempted"`
	RetryDelays      string   `json:"retry_delays,omitempty"`
	Tags             string   `json:"tags,omitempty"`
	TagList          []string `json:"tag_list,omitempty"`
	Input            string   `json:"input,omitempty"`
	Output           string   `json:"output,omitempty"`
	Attempt          luaUint  `json:"attempt"`
	Pos              int64    `json:"pos,omitempty"`
	Retry            bool     `json:"retry,omitempty"`
}

// upstreamJob converts the hash of Ocypod job id into a record, or says
// why it cannot be copied.
func (u *upstream) upstreamJob(id uint64, h map[string]string) (*importRecord, error) {
	if len(h) == 0 {
		return nil, nil // gone since the survey
	}
	if _, ok := h["id"]; !ok {
		return nil, fmt.Errorf("a partial hash without an id (fields %s), as Ocypod's take race leaves", truncate(strings.Join(slices.Sorted(maps.Keys(h)), ", ")))
	}
	if h["id"] != strconv.FormatUint(id, 10) {
		return nil, fmt.Errorf("its id field is %q", truncate(h["id"]))
	}
	r := &importRecord{ID: h["id"], Queue: h["queue"], Status: h["status"]}
	if !ocypod.ValidQueueName(r.Queue) {
		return nil, fmt.Errorf("its queue field %q is not a queue name", truncate(r.Queue))
	}
	st, ok := ocypod.ParseStatus(r.Status)
	if !ok || st == ocypod.StatusScheduled || st == ocypod.StatusWaiting {
		return nil, fmt.Errorf("its status %q is not Ocypod's", truncate(r.Status))
	}
	var err error
	at := func(field string, need bool) string {
		v, ok := h[field]
		if err != nil || !ok && !need {
			return ""
		}
		t, perr := time.Parse(time.RFC3339Nano, v)
		if perr != nil {
			err = fmt.Errorf("its %s %q is not an RFC 3339 time", field, truncate(v))
			return ""
		}
		return strconv.FormatInt(t.UnixMicro(), 10)
	}
	r.CreatedAt = at("created_at", true)
	r.StartedAt = at("started_at", st == ocypod.StatusRunning)
	r.EndedAt = at("ended_at", st != ocypod.StatusQueued && st != ocypod.StatusRunning)
	r.LastHeartbeat = at("last_heartbeat", false)
	whole := func(field string) uint64 {
		n, perr := strconv.ParseUint(h[field], 10, 64)
		if perr != nil && err == nil {
			err = fmt.Errorf("its %s %q is not a whole number", field, truncate(h[field]))
		}
		return n
	}
	r.Timeout, r.HeartbeatTimeout, r.ExpiresAfter = luaUint(whole("timeout")), luaUint(whole("heartbeat_timeout")), luaUint(whole("expires_after"))
	retries, attempted := whole("retries"), whole("retries_attempted")
	r.Retries, r.RetriesAttempted = luaUint(retries), luaUint(attempted)
	if err != nil {
		return nil, err
	}
	if d, ok := h["retry_delays"]; ok {
		ds, err := upstreamDelays(d)
		if err != nil {
			return nil, fmt.Errorf("its %v", err)
		}
		r.RetryDelays = encodeDelays(ds)
	}
	if t, ok := h["tags"]; ok && t != "null" {
		var tags []string
		if err := json.Unmarshal([]byte(t), &tags); err != nil || tags == nil {
			return nil, fmt.Errorf("its tags %q are not a JSON array of strings", truncate(t))
		}
		if err := (&ocypod.JobSpec{Tags: tags}).Validate(); err != nil {
			return nil, fmt.Errorf("its tags are refused by the API: %s", ocypod.ErrorMessage(err))
		}
		if r.Tags, r.TagList, err = encodeTags(tags); err != nil {
			return nil, fmt.Errorf("its tags: %v", err)
		}
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"input", &r.Input}, {"output", &r.Output}} {
		if v, ok := h[f.name]; ok {
			if u.maxValue > 0 && int64(len(v)) > u.maxValue {
				return nil, fmt.Errorf("its %s is %d bytes, over the API's limit of %d (server.max_body_size)", f.name, len(v), u.maxValue)
			}
			if !json.Valid([]byte(v)) {
				return nil, fmt.Errorf("its %s is not JSON", f.name)
			}
			*f.dst = v
		}
	}
	if r.Input == "null" {
		r.Input = ""
	}
	// How many times it was taken, as far as Ocypod tells: once per
	// automatic retry, and once more for the attempt under way or ended.
	taken := attempted
	if r.StartedAt != "" {
		taken++
	}
	r.Attempt = luaUint(taken)
	switch st {
	case ocypod.StatusQueued:
		if p, ok := u.pos[id]; ok {
			r.Pos = p
		} else {
			r.Pos = u.strayPos(id)
		}
	case ocypod.StatusFailed, ocypod.StatusTimedOut:
		r.Retry = u.failed[id]
	}
	return r, nil
}
