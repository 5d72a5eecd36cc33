package ocypod

import (
	"fmt"
	"io"
	"log/slog"
)

// Sealed is a setting kept with its secret: a queue's push target or a
// callback, in the form package push stores (its MarshalStored). Only the
// store and the dispatcher read it; every way of printing it (fmt verbs,
// slog, JSON) shows "set", so a secret never reaches an answer or a log by
// accident. nil means no setting.
type Sealed []byte

func (s Sealed) shown() string {
	if len(s) == 0 {
		return "unset"
	}
	return "set"
}

// String is "set" or "unset".
func (s Sealed) String() string { return s.shown() }

// GoString is "set" or "unset", so %#v of settings hides the secret too.
func (s Sealed) GoString() string { return s.shown() }

// Format prints "set" or "unset" for every verb.
func (s Sealed) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, s.shown()) }

// LogValue is "set" or "unset".
func (s Sealed) LogValue() slog.Value { return slog.StringValue(s.shown()) }

// MarshalJSON writes "set" or "unset", never the stored form.
func (s Sealed) MarshalJSON() ([]byte, error) { return []byte(`"` + s.shown() + `"`), nil }
