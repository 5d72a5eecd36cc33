package httpapi_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/ocyless/ocyless/shared/httpapi"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// The API on a store, as the local server mounts it: every route of the
// table on one handler. (A Lambda function serves one route of it instead,
// with RouteHandler.) The store here is on an in-process miniredis; a
// deployment gives it a client of redisstore.NewClient.
func ExampleAPI_Handler() {
	rdb, closeRedis := redistest.MiniredisClient()
	defer closeRedis()
	store, err := redisstore.New(rdb, redisstore.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	h := httpapi.New(store, httpapi.Options{}).Handler()

	send := func(method, path, body string) {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		line := fmt.Sprint(method, " ", path, " ", w.Code)
		if b, _ := io.ReadAll(w.Body); len(b) > 0 {
			line += " " + string(b)
		}
		if allow := w.Header().Get("Allow"); allow != "" {
			line += " Allow: " + allow
		}
		fmt.Println(line)
	}
	send(http.MethodPut, "/queue/demo", `{"timeout":"10m"}`)
	send(http.MethodPost, "/queue/demo/job", `{"input":{"n":1}}`)
	send(http.MethodGet, "/queue/demo/job", "")
	send(http.MethodPatch, "/job/1", `{"status":"completed","output":{"ok":true}}`)
	send(http.MethodGet, "/job/1?fields=status,output", "")
	send(http.MethodGet, "/job/x", "")
	send(http.MethodPost, "/queue/demo/size", "")
	// Output:
	// PUT /queue/demo 201
	// POST /queue/demo/job 201 1
	// GET /queue/demo/job 200 {"id":1,"input":{"n":1}}
	// PATCH /job/1 204
	// GET /job/1?fields=status,output 200 {"status":"completed","output":{"ok":true}}
	// GET /job/x 404 can not parse "x" to a u64
	// POST /queue/demo/size 405 Allow: GET
}
