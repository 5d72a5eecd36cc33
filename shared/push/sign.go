package push

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader carries the signature of a delivery or callback body.
const SignatureHeader = "Ocyless-Signature"

// DefaultTolerance is how far a signature's time may be from the
// receiver's clock in Verify, as most webhook senders use.
const DefaultTolerance = 5 * time.Minute

// Sign returns the Ocyless-Signature value for body sent at t:
// "t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed with secret>".
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

func mac(secret []byte, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Errors of Verify.
var (
	ErrSignatureMissing   = errors.New("push: no Ocyless-Signature or no t= and v1= in it")
	ErrSignatureMismatch  = errors.New("push: signature does not match")
	ErrSignatureOutOfTime = errors.New("push: signature time outside the tolerance")
)

// Verify checks an Ocyless-Signature header value against body, for the
// receiving side: the HMAC is compared in constant time, and t must be
// within tolerance of now (tolerance <= 0: DefaultTolerance). Several v1=
// entries are accepted (any may match), so a sender may sign with an old
// and a new secret while keys rotate.
func Verify(secret []byte, header string, body []byte, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	var ts string
	var sigs [][]byte
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			if b, err := hex.DecodeString(v); err == nil && len(b) == sha256.Size {
				sigs = append(sigs, b)
			}
		}
	}
	if ts == "" || len(sigs) == 0 {
		return ErrSignatureMissing
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return ErrSignatureMissing
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return ErrSignatureOutOfTime
	}
	want := mac(secret, ts, body)
	ok := false
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			ok = true
		}
	}
	if !ok {
		return ErrSignatureMismatch
	}
	return nil
}
