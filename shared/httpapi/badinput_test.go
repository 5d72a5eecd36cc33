package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// badInput is a request that must be refused before the store is touched.
type badInput struct {
	name         string
	method, path string // "{job}" in path stands for an existing job's id
	contentType  string // "" means application/json; "-" means none
	body         string
	stream       bool // hide the body's length, as a chunked transfer does
	status       int
	text         string
}

const (
	jsonErr     = "Json deserialize error: "
	invalidName = "Invalid queue name, valid characters: a-zA-Z0-9_.-"
	variants    = "expected one of `queued`, `running`, `completed`, `failed`, `cancelled`, `timed_out`"
)

// badInputLimit is the body limit the bad-input tests run with.
const badInputLimit = 1024

func badInputs() []badInput {
	deep := strings.Repeat("[", 200) + strings.Repeat("]", 200)
	huge := `{"input":"` + strings.Repeat("x", badInputLimit) + `"}`
	manyFields := strings.Repeat("id,", 20000) + "nope"
	return []badInput{
		// Content type, checked before the size.
		{name: "no content type", method: "PUT", path: "/queue/q", contentType: "-", body: `{}`, status: 400, text: "Content type error"},
		{name: "text/plain", method: "POST", path: "/queue/q/job", contentType: "text/plain", body: `{}`, status: 400, text: "Content type error"},
		{name: "form", method: "PATCH", path: "/job/{job}", contentType: "application/x-www-form-urlencoded", body: `status=completed`, status: 400, text: "Content type error"},
		{name: "jsonx", method: "PUT", path: "/job/{job}/output", contentType: "application/jsonx", body: `1`, status: 400, text: "Content type error"},
		{name: "huge text", method: "PUT", path: "/queue/q", contentType: "text/plain", body: huge, status: 400, text: "Content type error"},
		// Size.
		{name: "declared too large", method: "POST", path: "/queue/q/job", body: huge, status: 413,
			text: "JSON payload (1036 bytes) is larger than allowed (limit: 1024 bytes)."},
		{name: "streamed too large", method: "PUT", path: "/job/{job}/output", body: huge, stream: true, status: 413,
			text: "JSON payload has exceeded limit (1024 bytes)."},
		// Syntax.
		{name: "empty body", method: "PUT", path: "/queue/q", status: 400, text: jsonErr + "EOF while parsing a value at line 1 column 0"},
		{name: "empty output", method: "PUT", path: "/job/{job}/output", status: 400, text: jsonErr + "EOF while parsing a value at line 1 column 0"},
		{name: "truncated", method: "PUT", path: "/queue/q", body: `{"timeout":"5m"`, status: 400, text: jsonErr + "EOF while parsing an object at line 1 column 15"},
		{name: "trailing", method: "PUT", path: "/queue/q", body: `{}x`, status: 400, text: jsonErr + "trailing characters at line 1 column 3"},
		{name: "trailing comma", method: "PUT", path: "/job/{job}/output", body: `{"a":1,}`, status: 400, text: jsonErr + "trailing comma at line 1 column 8"},
		{name: "single quotes", method: "PATCH", path: "/job/{job}", body: `{'status':'completed'}`, status: 400, text: jsonErr + "key must be a string at line 1 column 2"},
		{name: "bad input value", method: "POST", path: "/queue/q/job", body: `{"input":{"a":}}`, status: 400, text: jsonErr + "expected value at line 1 column 15"},
		{name: "NaN", method: "PUT", path: "/job/{job}/output", body: `NaN`, status: 400, text: jsonErr + "expected value at line 1 column 1"},
		{name: "leading zero", method: "PUT", path: "/job/{job}/output", body: `01`, status: 400, text: jsonErr + "invalid number at line 1 column 2"},
		{name: "huge float", method: "PUT", path: "/job/{job}/output", body: `[1e999]`, status: 400, text: jsonErr + "number out of range at line 1 column 7"},
		{name: "lone surrogate", method: "PUT", path: "/job/{job}/output", body: `"\ud800"`, status: 400, text: jsonErr + "unexpected end of hex escape at line 1 column 8"},
		{name: "bad escape", method: "POST", path: "/queue/q/job", body: `{"tags":["a\x"]}`, status: 400, text: jsonErr + "invalid escape at line 1 column 13"},
		{name: "invalid utf-8", method: "POST", path: "/queue/q/job", body: "{\"tags\":[\"\xc3\x28\"]}", status: 400, text: jsonErr + "invalid unicode code point at line 1 column 11"},
		{name: "too deep", method: "PUT", path: "/job/{job}/output", body: deep, status: 400, text: jsonErr + "recursion limit exceeded at line 1 column 128"},
		{name: "too deep unknown field", method: "PUT", path: "/queue/q", body: `{"x":` + deep + `}`, status: 400, text: jsonErr + "recursion limit exceeded at line 1 column 132"},
		{name: "BOM", method: "PUT", path: "/queue/q", body: "\ufeff{}", status: 400, text: jsonErr + "expected value at line 1 column 1"},
		// Types.
		{name: "not an object", method: "PUT", path: "/queue/q", body: `["5m"]`, status: 400, text: jsonErr + "invalid type: sequence, expected a JSON object at line 1 column 6"},
		{name: "null body", method: "POST", path: "/queue/q/job", body: `null`, status: 400, text: jsonErr + "invalid type: null, expected a JSON object at line 1 column 4"},
		{name: "number duration", method: "PUT", path: "/queue/q", body: `{"timeout":30}`, status: 400, text: jsonErr + "invalid type: integer `30`, expected a duration string at line 1 column 14"},
		{name: "null duration", method: "PUT", path: "/queue/q", body: `{"expires_after":null}`, status: 400, text: jsonErr + "invalid type: null, expected a duration string at line 1 column 22"},
		{name: "null retries", method: "PUT", path: "/queue/q", body: `{"retries":null}`, status: 400, text: jsonErr + "invalid type: null, expected u64 at line 1 column 16"},
		{name: "null delays", method: "PUT", path: "/queue/q", body: `{"retry_delays":null}`, status: 400, text: jsonErr + "invalid type: null, expected a sequence at line 1 column 21"},
		{name: "bare number", method: "PUT", path: "/queue/q", body: `{"timeout":"30"}`, status: 400, text: jsonErr + "time unit needed, for example 30sec or 30ms at line 1 column 16"},
		{name: "empty duration", method: "POST", path: "/queue/q/job", body: `{"timeout":""}`, status: 400, text: jsonErr + "value was empty at line 1 column 14"},
		{name: "negative duration", method: "POST", path: "/queue/q/job", body: `{"heartbeat_timeout":"-1s"}`, status: 400, text: jsonErr + "expected number at 0 at line 1 column 27"},
		{name: "unknown unit", method: "PUT", path: "/queue/q", body: `{"timeout":"5 parsecs"}`, status: 400,
			text: jsonErr + `unknown time unit "parsecs", supported units: ns, us, ms, sec, min, hours, days, weeks, months, years (and few variations) at line 1 column 23`},
		{name: "huge duration", method: "PUT", path: "/queue/q", body: `{"timeout":"99999999999999999999s"}`, status: 400, text: jsonErr + "number is too large at line 1 column 35"},
		{name: "decimal duration", method: "PUT", path: "/queue/q", body: `{"timeout":"1.5s"}`, status: 400, text: jsonErr + "invalid character at 1 at line 1 column 18"},
		{name: "negative retries", method: "PUT", path: "/queue/q", body: `{"retries":-1}`, status: 400, text: jsonErr + "invalid value: integer `-1`, expected u64 at line 1 column 14"},
		{name: "float retries", method: "POST", path: "/queue/q/job", body: `{"retries":3.0}`, status: 400, text: jsonErr + "invalid type: floating point `3.0`, expected u64 at line 1 column 15"},
		{name: "string retries", method: "PUT", path: "/queue/q", body: `{"retries":"3"}`, status: 400, text: jsonErr + `invalid type: string "3", expected u64 at line 1 column 15`},
		{name: "overflowing retries", method: "PUT", path: "/queue/q", body: `{"retries":18446744073709551616}`, status: 400,
			text: jsonErr + "invalid value: integer `18446744073709551616`, expected u64 at line 1 column 32"},
		{name: "bool retries", method: "POST", path: "/queue/q/job", body: `{"retries":true}`, status: 400, text: jsonErr + "invalid type: boolean `true`, expected u64 at line 1 column 16"},
		{name: "delays not a list", method: "PUT", path: "/queue/q", body: `{"retry_delays":"1s"}`, status: 400, text: jsonErr + `invalid type: string "1s", expected a sequence at line 1 column 21`},
		{name: "delay not a string", method: "POST", path: "/queue/q/job", body: `{"retry_delays":["1s",2]}`, status: 400, text: jsonErr + "invalid type: integer `2`, expected a duration string at line 1 column 24"},
		{name: "tags not a list", method: "POST", path: "/queue/q/job", body: `{"tags":"a"}`, status: 400, text: jsonErr + `invalid type: string "a", expected a sequence at line 1 column 12`},
		{name: "tag not a string", method: "POST", path: "/queue/q/job", body: `{"tags":["a",{}]}`, status: 400, text: jsonErr + "invalid type: map, expected a string at line 1 column 16"},
		{name: "empty tag", method: "POST", path: "/queue/q/job", body: `{"tags":["a",""]}`, status: 400, text: "tags cannot be empty"},
		{name: "unknown status", method: "PATCH", path: "/job/{job}", body: `{"status":"foo"}`, status: 400, text: jsonErr + "unknown variant `foo`, " + variants + " at line 1 column 16"},
		{name: "status case", method: "PATCH", path: "/job/{job}", body: `{"status":"Completed"}`, status: 400, text: jsonErr + "unknown variant `Completed`, " + variants + " at line 1 column 22"},
		{name: "unicode status", method: "PATCH", path: "/job/{job}", body: `{"status":"complétéd"}`, status: 400, text: jsonErr + "unknown variant `complétéd`, " + variants + " at line 1 column 24"},
		{name: "numeric status", method: "PATCH", path: "/job/{job}", body: `{"status":1}`, status: 400, text: jsonErr + "invalid type: integer `1`, expected a status string at line 1 column 12"},
		// Duplicate keys.
		{name: "duplicate status", method: "PATCH", path: "/job/{job}", body: `{"status":"completed","status":"failed"}`, status: 400, text: jsonErr + "duplicate field `status` at line 1 column 31"},
		{name: "duplicate output", method: "PATCH", path: "/job/{job}", body: `{"output":null,"output":1}`, status: 400, text: jsonErr + "duplicate field `output` at line 1 column 24"},
		{name: "duplicate input", method: "POST", path: "/queue/q/job", body: `{"input":1,"tags":[],"input":2}`, status: 400, text: jsonErr + "duplicate field `input` at line 1 column 29"},
		{name: "duplicate retries", method: "PUT", path: "/queue/q", body: `{"retries":1,"retries":1}`, status: 400, text: jsonErr + "duplicate field `retries` at line 1 column 23"},
		// Path and query.
		{name: "bad queue name", method: "PUT", path: "/queue/a%2Fb", body: `{}`, status: 400, text: invalidName},
		{name: "body before name", method: "POST", path: "/queue/a%2Fb/job", body: `{`, status: 400, text: jsonErr + "EOF while parsing an object at line 1 column 1"},
		{name: "unicode queue name", method: "POST", path: "/queue/%E2%9C%93/job", body: `{}`, status: 400, text: invalidName},
		{name: "bad job id before body", method: "PATCH", path: "/job/x", body: `{`, status: 404, text: `can not parse "x" to a u64`},
		{name: "negative job id", method: "PUT", path: "/job/-1/output", body: `1`, status: 404, text: `can not parse "-1" to a u64`},
		{name: "huge job id", method: "DELETE", path: "/job/18446744073709551616", status: 404, text: `can not parse "18446744073709551616" to a u64`},
		{name: "unknown field", method: "GET", path: "/job/{job}?fields=id,nope", status: 400, text: "Unrecognised field: nope"},
		{name: "empty fields", method: "GET", path: "/job/{job}?fields=", status: 400, text: "Unrecognised field: "},
		{name: "bare fields", method: "GET", path: "/job/{job}?fields", status: 400, text: "Unrecognised field: "},
		{name: "trailing comma field", method: "GET", path: "/job/{job}?fields=id,", status: 400, text: "Unrecognised field: "},
		{name: "spaced field", method: "GET", path: "/job/{job}?fields=id,%20status", status: 400, text: "Unrecognised field:  status"},
		{name: "plus field", method: "GET", path: "/job/{job}?fields=id,+status", status: 400, text: "Unrecognised field:  status"},
		{name: "upper-case field", method: "GET", path: "/job/{job}?fields=ID", status: 400, text: "Unrecognised field: ID"},
		{name: "unicode field", method: "GET", path: "/job/{job}?fields=%C3%A9", status: 400, text: "Unrecognised field: é"},
		{name: "duplicate fields", method: "GET", path: "/job/{job}?fields=bad&fields=id", status: 400, text: "Query deserialize error: duplicate field `fields`"},
		{name: "huge field list", method: "GET", path: "/job/{job}?fields=" + manyFields, status: 400, text: "Unrecognised field: nope"},
	}
}

// request builds tt's request for the job id job.
func (tt badInput) request(job string) *http.Request {
	r := newRequest(tt.method, strings.ReplaceAll(tt.path, "{job}", job), tt.body)
	switch tt.contentType {
	case "":
		r.Header.Set("Content-Type", "application/json")
	case "-":
		r.Header.Del("Content-Type")
	default:
		r.Header.Set("Content-Type", tt.contentType)
	}
	if tt.stream {
		r = httptestRequestStream(tt.method, r.URL.String(), tt.body)
	}
	return r
}

func TestBadInputNeverReachesStore(t *testing.T) {
	t.Parallel()
	for _, tt := range badInputs() {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := &fakeStore{}
			h := New(store, Options{MaxBodySize: badInputLimit}).Handler()
			wantText(t, serve(h, tt.request("1")), tt.status, tt.text)
			if calls := store.Calls(); len(calls) != 0 {
				t.Errorf("store calls = %v, want none", calls)
			}
		})
	}
}
