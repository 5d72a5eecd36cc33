package push

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Limits of the push and callback settings (contract §10, §11).
const (
	MinBatch           = 1
	MaxBatch           = 100
	DefaultBatch       = 1
	MinConcurrency     = 1
	MaxConcurrency     = 1000
	DefaultConcurrency = 10
	MinTimeout         = time.Second
	MaxTimeout         = 15 * time.Minute
	MinSecretLen       = 16
	MaxSecretLen       = 256
	// NewSecretLen is the length of a server-made secret: 32 random bytes,
	// base64url without padding (43 characters).
	NewSecretLen = 32
)

// Secret is a write-only HMAC key. Every way of printing it (fmt verbs,
// slog, JSON) shows "set" or nothing; only Bytes gives the key itself, for
// signing and for the store.
type Secret struct{ key []byte }

// NewSecret makes a secret from crypto/rand.
func NewSecret() Secret {
	b := make([]byte, NewSecretLen)
	if _, err := rand.Read(b); err != nil {
		panic("push: crypto/rand: " + err.Error()) // never fails on supported platforms
	}
	return Secret{key: []byte(base64.RawURLEncoding.EncodeToString(b))}
}

// SecretFrom wraps a key kept by the store. It does not check the length.
func SecretFrom(key []byte) Secret { return Secret{key: bytes.Clone(key)} }

// Bytes is the key. Never log it, never send it to a client.
func (s Secret) Bytes() []byte { return s.key }

// IsSet reports whether the secret holds a key.
func (s Secret) IsSet() bool { return len(s.key) > 0 }

func (s Secret) shown() string {
	if s.IsSet() {
		return "set"
	}
	return "unset"
}

// String is "set" or "unset".
func (s Secret) String() string { return s.shown() }

// GoString is "set" or "unset", so %#v of a Target hides the key too.
func (s Secret) GoString() string { return s.shown() }

// Format prints "set" or "unset" for every verb.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, s.shown()) }

// LogValue is "set" or "unset".
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.shown()) }

// MarshalJSON writes "set" (the public view): the key is never encoded.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.shown()) }

// Target is a queue's push setting (§10): where and how its jobs are
// delivered. Exactly one of URL and Lambda is set.
type Target struct {
	URL         string
	Lambda      string
	Batch       int
	Concurrency int
	// Timeout is how long a delivery may take; zero means the queue's
	// timeout (see EffectiveTimeout).
	Timeout ocypod.Duration
	Secret  Secret
}

// EffectiveTimeout is the delivery timeout: the setting, else the queue's
// timeout, and never more than 15 minutes (nor zero: a queue without a
// timeout gets 15 minutes).
func (t *Target) EffectiveTimeout(queueTimeout ocypod.Duration) time.Duration {
	d := t.Timeout.Std()
	if t.Timeout.IsZero() {
		d = queueTimeout.Std()
	}
	if d <= 0 || d > MaxTimeout {
		return MaxTimeout
	}
	return d
}

// publicTarget is the GET view: the secret shows as "set".
type publicTarget struct {
	URL         string           `json:"url,omitempty"`
	Lambda      string           `json:"lambda,omitempty"`
	Batch       int              `json:"batch"`
	Concurrency int              `json:"concurrency"`
	Timeout     *ocypod.Duration `json:"timeout,omitempty"`
	Secret      string           `json:"secret"`
}

// MarshalJSON writes the public view {"url"|"lambda", "batch",
// "concurrency", "timeout"?, "secret": "set"}. The key is never written;
// the store keeps it with MarshalStored.
func (t Target) MarshalJSON() ([]byte, error) {
	p := publicTarget{URL: t.URL, Lambda: t.Lambda, Batch: t.Batch, Concurrency: t.Concurrency, Secret: "set"}
	if !t.Timeout.IsZero() {
		d := t.Timeout
		p.Timeout = &d
	}
	return json.Marshal(p)
}

// LogValue is the public view: the key never reaches a log.
func (t Target) LogValue() slog.Value {
	attrs := []slog.Attr{slog.Int("batch", t.Batch), slog.Int("concurrency", t.Concurrency)}
	if t.URL != "" {
		attrs = append(attrs, slog.String("url", redactURL(t.URL)))
	} else {
		attrs = append(attrs, slog.String("lambda", t.Lambda))
	}
	return slog.GroupValue(attrs...)
}

// storedTarget is the store's form, key included.
type storedTarget struct {
	URL         string          `json:"url,omitempty"`
	Lambda      string          `json:"lambda,omitempty"`
	Batch       int             `json:"batch"`
	Concurrency int             `json:"concurrency"`
	Timeout     ocypod.Duration `json:"timeout"`
	Secret      string          `json:"secret_b64"`
}

// MarshalStored encodes the target with its key, for the store only.
func (t Target) MarshalStored() ([]byte, error) {
	return json.Marshal(storedTarget{URL: t.URL, Lambda: t.Lambda, Batch: t.Batch, Concurrency: t.Concurrency,
		Timeout: t.Timeout, Secret: base64.StdEncoding.EncodeToString(t.Secret.key)})
}

// UnmarshalStored reads what MarshalStored wrote. It does not check the
// target against a policy: do that when the setting is written.
func UnmarshalStored(b []byte) (Target, error) {
	var s storedTarget
	if err := json.Unmarshal(b, &s); err != nil {
		return Target{}, err
	}
	key, err := base64.StdEncoding.DecodeString(s.Secret)
	if err != nil {
		return Target{}, fmt.Errorf("push setting: secret: %w", err)
	}
	return Target{URL: s.URL, Lambda: s.Lambda, Batch: s.Batch, Concurrency: s.Concurrency, Timeout: s.Timeout,
		Secret: Secret{key: key}}, nil
}

// DecodeTarget reads the JSON value of a `push` setting. JSON null gives
// (nil, nil): the setting is removed. Unknown keys are refused with
// "Unknown field: push.<name>", bad values with "Invalid push: <reason>";
// both are ocypod.KindInvalid errors (400). Defaults are filled in (batch 1,
// concurrency 10) and a missing secret is made with crypto/rand. A url is
// checked against pol (nil: no host check, syntax only).
func DecodeTarget(raw []byte, pol *Policy) (*Target, error) {
	fields, err := decodeObject(raw, "push")
	if err != nil || fields == nil {
		return nil, err
	}
	t := &Target{Batch: DefaultBatch, Concurrency: DefaultConcurrency}
	for _, f := range fields {
		switch f.name {
		case "url":
			t.URL, err = stringField("push", f)
		case "lambda":
			t.Lambda, err = stringField("push", f)
		case "batch":
			t.Batch, err = intField("push", f, MinBatch, MaxBatch)
		case "concurrency":
			t.Concurrency, err = intField("push", f, MinConcurrency, MaxConcurrency)
		case "timeout":
			t.Timeout, err = durationField("push", f)
		case "secret":
			t.Secret, err = secretField("push", f)
		default:
			return nil, ocypod.Invalid("Unknown field: push." + f.name)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := t.validate(pol); err != nil {
		return nil, err
	}
	if !t.Secret.IsSet() {
		t.Secret = NewSecret()
	}
	return t, nil
}

// Validate checks a target built in Go (DecodeTarget already does): the
// same rules and texts as DecodeTarget, and the url against pol.
func (t *Target) Validate(pol *Policy) error {
	if err := t.validate(pol); err != nil {
		return err
	}
	if !t.Secret.IsSet() {
		return invalid("push", "secret is missing")
	}
	return nil
}

func (t *Target) validate(pol *Policy) error {
	switch {
	case t.URL != "" && t.Lambda != "":
		return invalid("push", "give url or lambda, not both")
	case t.URL == "" && t.Lambda == "":
		return invalid("push", "url or lambda is required")
	case t.Batch < MinBatch || t.Batch > MaxBatch:
		return invalid("push", fmt.Sprintf("batch must be %d..%d", MinBatch, MaxBatch))
	case t.Concurrency < MinConcurrency || t.Concurrency > MaxConcurrency:
		return invalid("push", fmt.Sprintf("concurrency must be %d..%d", MinConcurrency, MaxConcurrency))
	}
	if !t.Timeout.IsZero() {
		if d := t.Timeout.Std(); d < MinTimeout || d > MaxTimeout {
			return invalid("push", "timeout must be between 1s and 15m")
		}
	}
	if t.Secret.IsSet() {
		if n := len(t.Secret.key); n < MinSecretLen || n > MaxSecretLen {
			return invalid("push", fmt.Sprintf("secret must be %d..%d bytes", MinSecretLen, MaxSecretLen))
		}
	}
	if t.Lambda != "" {
		if err := checkFunctionName(t.Lambda); err != nil {
			return invalid("push", "lambda: "+err.Error())
		}
		return nil
	}
	if err := pol.CheckURL(t.URL); err != nil {
		return invalid("push", err.Error())
	}
	return nil
}

// checkFunctionName accepts a Lambda function name, a partial ARN
// (account:function:name) or a full ARN, each with an optional qualifier,
// as the Invoke API does: letters, digits, '-', '_', ':', '.', '$', at most
// 170 bytes for an ARN form and 64 for a plain name.
func checkFunctionName(s string) error {
	if len(s) > 170 {
		return fmt.Errorf("longer than 170 bytes")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == ':', c == '.', c == '$':
		default:
			return fmt.Errorf("invalid character %q in a function name or ARN", c)
		}
	}
	if !strings.Contains(s, ":") && len(s) > 64 {
		return fmt.Errorf("a function name is at most 64 bytes")
	}
	return nil
}

// Callback is a job's or queue's callback setting (§11): where the job
// object is POSTed when it ends with one of the On statuses.
type Callback struct {
	URL    string
	On     []ocypod.Status
	Secret Secret
}

// EndingStatuses are the statuses a callback may name, and its default.
var EndingStatuses = []ocypod.Status{ocypod.StatusCompleted, ocypod.StatusFailed, ocypod.StatusCancelled, ocypod.StatusTimedOut}

// Wants reports whether the callback fires for an ending in status st.
func (c *Callback) Wants(st ocypod.Status) bool {
	for _, s := range c.On {
		if s == st {
			return true
		}
	}
	return false
}

type publicCallback struct {
	URL    string          `json:"url"`
	On     []ocypod.Status `json:"on"`
	Secret string          `json:"secret"`
}

// MarshalJSON writes the public view {"url", "on", "secret": "set"}.
func (c Callback) MarshalJSON() ([]byte, error) {
	return json.Marshal(publicCallback{URL: c.URL, On: c.On, Secret: "set"})
}

// LogValue is the public view without the key.
func (c Callback) LogValue() slog.Value {
	on := make([]string, len(c.On))
	for i, s := range c.On {
		on[i] = string(s)
	}
	return slog.GroupValue(slog.String("url", redactURL(c.URL)), slog.String("on", strings.Join(on, ",")))
}

type storedCallback struct {
	URL    string          `json:"url"`
	On     []ocypod.Status `json:"on"`
	Secret string          `json:"secret_b64"`
}

// MarshalStored encodes the callback with its key, for the store only.
func (c Callback) MarshalStored() ([]byte, error) {
	return json.Marshal(storedCallback{URL: c.URL, On: c.On, Secret: base64.StdEncoding.EncodeToString(c.Secret.key)})
}

// UnmarshalStoredCallback reads what Callback.MarshalStored wrote.
func UnmarshalStoredCallback(b []byte) (Callback, error) {
	var s storedCallback
	if err := json.Unmarshal(b, &s); err != nil {
		return Callback{}, err
	}
	key, err := base64.StdEncoding.DecodeString(s.Secret)
	if err != nil {
		return Callback{}, fmt.Errorf("callback setting: secret: %w", err)
	}
	return Callback{URL: s.URL, On: s.On, Secret: Secret{key: key}}, nil
}

// DecodeCallback reads the JSON value of a `callback` field or setting, as
// DecodeTarget does: null gives (nil, nil); "Unknown field: callback.<name>"
// and "Invalid callback: <reason>"; `on` defaults to every ending status;
// a missing secret is made with crypto/rand.
func DecodeCallback(raw []byte, pol *Policy) (*Callback, error) {
	fields, err := decodeObject(raw, "callback")
	if err != nil || fields == nil {
		return nil, err
	}
	c := &Callback{}
	haveOn := false
	for _, f := range fields {
		switch f.name {
		case "url":
			c.URL, err = stringField("callback", f)
		case "on":
			haveOn = true
			c.On, err = statusesField(f)
		case "secret":
			c.Secret, err = secretField("callback", f)
		default:
			return nil, ocypod.Invalid("Unknown field: callback." + f.name)
		}
		if err != nil {
			return nil, err
		}
	}
	if !haveOn {
		c.On = append([]ocypod.Status(nil), EndingStatuses...)
	}
	if err := c.validate(pol); err != nil {
		return nil, err
	}
	if !c.Secret.IsSet() {
		c.Secret = NewSecret()
	}
	return c, nil
}

// Validate checks a callback built in Go, as DecodeCallback does.
func (c *Callback) Validate(pol *Policy) error {
	if err := c.validate(pol); err != nil {
		return err
	}
	if !c.Secret.IsSet() {
		return invalid("callback", "secret is missing")
	}
	return nil
}

func (c *Callback) validate(pol *Policy) error {
	if c.URL == "" {
		return invalid("callback", "url is required")
	}
	if len(c.On) == 0 {
		return invalid("callback", "on must name at least one of completed, failed, cancelled, timed_out")
	}
	seen := map[ocypod.Status]bool{}
	for _, s := range c.On {
		if !isEnding(s) {
			return invalid("callback", fmt.Sprintf("on: %q is not an ending status (completed, failed, cancelled, timed_out)", s))
		}
		if seen[s] {
			return invalid("callback", fmt.Sprintf("on: %q is given twice", s))
		}
		seen[s] = true
	}
	if c.Secret.IsSet() {
		if n := len(c.Secret.key); n < MinSecretLen || n > MaxSecretLen {
			return invalid("callback", fmt.Sprintf("secret must be %d..%d bytes", MinSecretLen, MaxSecretLen))
		}
	}
	if err := pol.CheckURL(c.URL); err != nil {
		return invalid("callback", err.Error())
	}
	return nil
}

func isEnding(s ocypod.Status) bool {
	for _, e := range EndingStatuses {
		if s == e {
			return true
		}
	}
	return false
}

func invalid(setting, reason string) error {
	return ocypod.Invalid("Invalid " + setting + ": " + reason)
}

type field struct {
	name string
	raw  json.RawMessage
}

// decodeObject splits a JSON object into its keys in order; null gives
// nil. A key given twice is refused, as is anything but an object.
func decodeObject(raw []byte, setting string) ([]field, error) {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return nil, nil
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, invalid(setting, "expected an object or null, got "+jsonKind(raw))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return nil, invalid(setting, "malformed JSON")
	}
	var out []field
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, invalid(setting, "malformed JSON")
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, invalid(setting, "malformed JSON")
		}
		if seen[name] {
			return nil, invalid(setting, name+" is given twice")
		}
		seen[name] = true
		out = append(out, field{name: name, raw: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, invalid(setting, "malformed JSON")
	}
	if out == nil {
		out = []field{}
	}
	return out, nil
}

func stringField(setting string, f field) (string, error) {
	var s string
	if len(f.raw) == 0 || f.raw[0] != '"' || json.Unmarshal(f.raw, &s) != nil {
		return "", invalid(setting, f.name+": expected a string, got "+jsonKind(f.raw))
	}
	return s, nil
}

func intField(setting string, f field, lo, hi int) (int, error) {
	var n json.Number
	if err := json.Unmarshal(f.raw, &n); err != nil || len(f.raw) == 0 || f.raw[0] == '"' {
		return 0, invalid(setting, f.name+": expected an integer, got "+jsonKind(f.raw))
	}
	v, err := n.Int64()
	if err != nil {
		return 0, invalid(setting, fmt.Sprintf("%s must be an integer %d..%d", f.name, lo, hi))
	}
	if v < int64(lo) || v > int64(hi) {
		return 0, invalid(setting, fmt.Sprintf("%s must be %d..%d", f.name, lo, hi))
	}
	return int(v), nil
}

func durationField(setting string, f field) (ocypod.Duration, error) {
	var d ocypod.Duration
	if err := json.Unmarshal(f.raw, &d); err != nil {
		return d, invalid(setting, f.name+": "+err.Error())
	}
	// The range is checked before the sub-second part is dropped, so
	// "999ms" (or "0s") is refused rather than read as "no timeout".
	if std := d.Std(); std < MinTimeout || std > MaxTimeout {
		return d, invalid(setting, "timeout must be between 1s and 15m")
	}
	return d.Truncate(), nil
}

func secretField(setting string, f field) (Secret, error) {
	s, err := stringField(setting, f)
	if err != nil {
		return Secret{}, invalid(setting, "secret: expected a string")
	}
	if n := len(s); n < MinSecretLen || n > MaxSecretLen {
		// The text never repeats the value.
		return Secret{}, invalid(setting, fmt.Sprintf("secret must be %d..%d bytes", MinSecretLen, MaxSecretLen))
	}
	return Secret{key: []byte(s)}, nil
}

func statusesField(f field) ([]ocypod.Status, error) {
	var names []string
	if len(f.raw) == 0 || f.raw[0] != '[' || json.Unmarshal(f.raw, &names) != nil {
		return nil, invalid("callback", "on: expected a list of statuses, got "+jsonKind(f.raw))
	}
	out := make([]ocypod.Status, len(names))
	for i, n := range names {
		out[i] = ocypod.Status(n)
	}
	return out, nil
}

// jsonKind names a raw JSON value's type for error texts.
func jsonKind(b []byte) string {
	s := strings.TrimSpace(string(b))
	switch {
	case s == "":
		return "nothing"
	case s == "null":
		return "null"
	case s == "true" || s == "false":
		return "a boolean"
	case s[0] == '[':
		return "a list"
	case s[0] == '{':
		return "an object"
	case s[0] == '"':
		return "a string"
	default:
		return "a number"
	}
}
