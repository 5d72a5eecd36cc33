package push

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestCallbackBackoff(t *testing.T) {
	want := map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 12: 2048 * time.Second, 13: time.Hour, 100: time.Hour}
	for n, w := range want {
		if got := CallbackBackoff(n); got != w {
			t.Errorf("after %d: %v, want %v", n, got, w)
		}
	}
}

func TestSendCallback(t *testing.T) {
	clock := &fixedClock{t: time.Unix(1_800_000_000, 0)}
	status := http.StatusOK
	srv, got := endpoint(t, func(w http.ResponseWriter, r *http.Request) {
		if status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "30")
		}
		if status == http.StatusFound {
			w.Header().Set("Location", "http://127.0.0.1:1/")
		}
		w.WriteHeader(status)
		io.WriteString(w, "answer")
	})
	d := newDeliverer(t, Options{Now: clock.Now})
	cb := &Callback{URL: srv.URL + "/done", On: EndingStatuses, Secret: SecretFrom([]byte(testSecret))}
	body := []byte(`{"id":5,"status":"completed","output":1}`)

	res := d.SendCallback(context.Background(), cb, 5, body)
	r := <-got
	if !res.Delivered || res.Error != nil || string(r.body) != string(body) || r.header.Get("Ocyless-Job-Id") != "5" {
		t.Fatalf("%+v %s %v", res, r.body, r.header)
	}
	verifyIndependently(t, r.header.Get(SignatureHeader), r.body, testSecret, clock.t.Unix())

	status = http.StatusServiceUnavailable
	res = d.SendCallback(context.Background(), cb, 5, body)
	<-got
	if res.Delivered || res.Error.Group != "push_http_503" || !res.RetryAt.Equal(clock.t.Add(30*time.Second)) {
		t.Fatalf("%+v", res)
	}
	status = http.StatusFound
	res = d.SendCallback(context.Background(), cb, 5, body)
	<-got
	if res.Delivered || res.Error.Group != "push_http_302" || !strings.Contains(res.Error.Message, "not followed") {
		t.Fatalf("%+v", res)
	}
	res = newDeliverer(t, Options{Policy: mustPolicy(t, nil, AWS)}).SendCallback(context.Background(), cb, 5, body)
	if res.Delivered || res.Error.Group != GroupUnreachable || !strings.HasPrefix(res.Error.Message, "target refused") {
		t.Fatalf("%+v", res)
	}
}
