package lambdahttp_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/ocyless/ocyless/shared/lambdahttp"
)

// A Handler turns an API Gateway event into a request for an http.Handler
// and its answer into the proxy response; lambda.Start(h) runs it on Lambda.
// The path parameters API Gateway matched reach the handler as path values.
func ExampleHandler_Invoke() {
	size := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "%q", r.PathValue("name"))
	})
	h := lambdahttp.New(size, nil)
	event := `{
		"version": "2.0",
		"routeKey": "GET /queue/{name}/size",
		"rawPath": "/queue/a b/size",
		"rawQueryString": "",
		"headers": {"accept": "application/json"},
		"pathParameters": {"name": "a b"},
		"requestContext": {"http": {"method": "GET", "path": "/queue/a b/size"}}
	}`
	out, err := h.Invoke(context.Background(), []byte(event))
	fmt.Println(string(out), err)
	// Output:
	// {"statusCode":200,"headers":{"Content-Type":"application/json"},"multiValueHeaders":null,"body":"\"a b\"","cookies":[]} <nil>
}
