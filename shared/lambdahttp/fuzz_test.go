package lambdahttp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"testing"

	"github.com/ocyless/ocyless/shared/lambdahttp"
)

// FuzzInvoke feeds arbitrary payloads to the adapter: it must never panic,
// and whenever it returns no error its output must be a proxy response
// with a real status code.
func FuzzInvoke(f *testing.F) {
	for _, file := range eventFiles(f) {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, seed := range []string{
		`{"version":"2.0","rawPath":"/tag/%","requestContext":{"http":{"method":"GET"}}}`,
		`{"version":"2.0","rawPath":"/a b/../c?d#e","rawQueryString":"x=%zz","headers":{"host":"h:1"},"requestContext":{"stage":"s","http":{"method":"POST"}},"body":"Zm9v","isBase64Encoded":true}`,
		`{"httpMethod":"GET","path":"/x y","multiValueQueryStringParameters":{"a":["1","2"]},"pathParameters":{"proxy+":"x"}}`,
		`{"version":"2.0","requestContext":{"domainName":"bad host/\u0000","http":{"method":"GET"}}}`,
		`{"requestContext":{"elb":{"targetGroupArn":"arn"}},"httpMethod":"GET","path":"/a%zz b","multiValueQueryStringParameters":{"%":["1"]},"multiValueHeaders":{"host":["h"]}}`,
		`{"requestContext":{"elb":{}},"httpMethod":"","path":"","headers":{"host":"bad host/"},"body":"!","isBase64Encoded":true}`,
		`{}`, `null`, `[]`,
	} {
		f.Add([]byte(seed))
	}
	h := lambdahttp.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if len(body) > 2 && body[0] == 'p' {
			panic("handler panic")
		}
		w.Header().Set("X-Path", r.URL.Path)
		_, _ = w.Write(body)
	}), nil)
	f.Fuzz(func(t *testing.T, payload []byte) {
		out, err := h.Invoke(t.Context(), payload)
		if err != nil {
			return
		}
		var resp struct {
			StatusCode int `json:"statusCode"`
		}
		if err := json.Unmarshal(out, &resp); err != nil {
			t.Fatalf("output %q is not JSON: %v", out, err)
		}
		if resp.StatusCode < 100 || resp.StatusCode > 599 {
			t.Fatalf("status %d in %q", resp.StatusCode, out)
		}
	})
}
