package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/push"
	"github.com/ocyless/ocyless/shared/wire"
)

// The push and callback settings (api-v3 §10, §11). Their secrets are
// write-only: a GET shows "secret": "set", and a secret the server makes
// (none given) is answered once, in a header of the request that made it
// (PushSecretHeader, CallbackSecretHeader), and never again.

// Headers that carry a secret the server made for this request.
const (
	PushSecretHeader     = "Ocyless-Push-Secret"
	CallbackSecretHeader = "Ocyless-Callback-Secret"
)

var (
	pushFields     = []string{"url", "lambda", "batch", "concurrency", "timeout", "secret"}
	callbackFields = []string{"url", "on", "secret"}
)

// pushValue reads a `push` setting (null: removed) into its sealed form.
func pushValue(v *wire.Value, pol *push.Policy) (ocypod.Sealed, error) {
	if v.Kind == wire.Null {
		return nil, nil
	}
	if err := refuseUnknown(v, pushFields, "push."); err != nil {
		return nil, err
	}
	t, err := push.DecodeTarget(wire.Canonical(v), pol)
	if err != nil {
		return nil, err
	}
	b, err := t.MarshalStored()
	return ocypod.Sealed(b), err
}

// callbackValue reads a `callback` field or setting (null: none).
func callbackValue(v *wire.Value, pol *push.Policy) (ocypod.Sealed, error) {
	if v.Kind == wire.Null {
		return nil, nil
	}
	if err := refuseUnknown(v, callbackFields, "callback."); err != nil {
		return nil, err
	}
	c, err := push.DecodeCallback(wire.Canonical(v), pol)
	if err != nil {
		return nil, err
	}
	b, err := c.MarshalStored()
	return ocypod.Sealed(b), err
}

// member is obj's member key, nil when absent.
func member(obj *wire.Value, key string) *wire.Value {
	if obj == nil || obj.Kind != wire.Object {
		return nil
	}
	for i := range obj.Members {
		if obj.Members[i].Key == key {
			return &obj.Members[i].Value
		}
	}
	return nil
}

// madeSecret reports whether obj's setting key was given without a secret
// (so the server made one).
func madeSecret(obj *wire.Value, key string) bool {
	v := member(obj, key)
	return v != nil && v.Kind == wire.Object && member(v, "secret") == nil
}

// answerMadeSecrets puts in w's headers the secrets the server made for
// the settings of obj (a PUT or PATCH body) that p now holds.
func answerMadeSecrets(w http.ResponseWriter, obj *wire.Value, p *ocypod.QueuePatch) {
	if madeSecret(obj, "push") && len(p.Push) > 0 {
		if t, err := push.UnmarshalStored(p.Push); err == nil {
			w.Header().Set(PushSecretHeader, string(t.Secret.Bytes()))
		}
	}
	if madeSecret(obj, "callback") && len(p.Callback) > 0 {
		if c, err := push.UnmarshalStoredCallback(p.Callback); err == nil {
			w.Header().Set(CallbackSecretHeader, string(c.Secret.Bytes()))
		}
	}
}

// answerCallbackSecret puts in w's headers the secret the server made
// for a job's callback.
func answerCallbackSecret(w http.ResponseWriter, sealed ocypod.Sealed) {
	if c, err := push.UnmarshalStoredCallback(sealed); err == nil && c.Secret.IsSet() {
		w.Header().Set(CallbackSecretHeader, string(c.Secret.Bytes()))
	}
}

// appendSealedViews appends to a GET /queue/{name} object (its closing
// brace removed and put back) the public views of its push and callback
// settings: the secret shows as "set".
func appendSealedViews(b []byte, s ocypod.QueueSettings) ([]byte, error) {
	if len(s.Push) == 0 && len(s.Callback) == 0 {
		return b, nil
	}
	b = b[:len(b)-1]
	if len(s.Push) > 0 {
		t, err := push.UnmarshalStored(s.Push)
		if err != nil {
			return nil, ocypod.Internal(fmt.Errorf("push setting: %w", err))
		}
		view, _ := json.Marshal(t)
		b = append(append(b, `,"push":`...), view...)
	}
	if len(s.Callback) > 0 {
		c, err := push.UnmarshalStoredCallback(s.Callback)
		if err != nil {
			return nil, ocypod.Internal(fmt.Errorf("callback setting: %w", err))
		}
		view, _ := json.Marshal(c)
		b = append(append(b, `,"callback":`...), view...)
	}
	return append(b, '}'), nil
}
