package deploygen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// AlbEventPath is where the load balancer's sample event of a route lives.
func AlbEventPath(route string) string { return "events/alb/" + route + ".json" }

// albEvent is an Application Load Balancer's Lambda event, as a target
// group with multi-value headers delivers it (template.yaml turns them on).
type albEvent struct {
	RequestContext struct {
		ELB struct {
			TargetGroupArn string `json:"targetGroupArn"`
		} `json:"elb"`
	} `json:"requestContext"`
	HTTPMethod      string              `json:"httpMethod"`
	Path            string              `json:"path"`
	MultiValueQuery map[string][]string `json:"multiValueQueryStringParameters"`
	MultiValueHdrs  map[string][]string `json:"multiValueHeaders"`
	Body            string              `json:"body"`
	IsBase64Encoded bool                `json:"isBase64Encoded"`
}

// albSample derives a route's load balancer event from its API Gateway
// sample (hand-edited, so the two stay one request): the same method,
// path, query, headers and body, in the load balancer's shape. It differs
// where the load balancer does: the path and query arrive as the client
// encoded them, and there are no path parameters.
func albSample(root string, f Function) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(root, f.Event))
	if os.IsNotExist(err) {
		data, err = skeletonEvent(f)
	}
	if err != nil {
		return nil, err
	}
	var api struct {
		RawPath         string            `json:"rawPath"`
		RawQueryString  string            `json:"rawQueryString"`
		Headers         map[string]string `json:"headers"`
		Body            *string           `json:"body"`
		IsBase64Encoded bool              `json:"isBase64Encoded"`
	}
	if err := json.Unmarshal(data, &api); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Event, err)
	}
	var ev albEvent
	name := f.Route.Name
	if len(name) > 24 {
		name = name[:24]
	}
	ev.RequestContext.ELB.TargetGroupArn = "arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/ocyless-" + name + "/0123456789abcdef"
	ev.HTTPMethod = f.Route.Method
	segs := strings.Split(api.RawPath, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	ev.Path = strings.Join(segs, "/")
	ev.MultiValueQuery = map[string][]string{}
	for _, kv := range strings.Split(api.RawQueryString, "&") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		ev.MultiValueQuery[k] = append(ev.MultiValueQuery[k], v)
	}
	ev.MultiValueHdrs = map[string][]string{}
	for k, v := range api.Headers {
		switch k = strings.ToLower(k); k {
		case "host":
			v = "internal-ocyless-alb-1234567890.eu-west-1.elb.amazonaws.com"
		case "x-forwarded-port":
			v = "80"
		case "x-forwarded-proto":
			v = "http"
		}
		ev.MultiValueHdrs[k] = []string{v}
	}
	if api.Body != nil {
		ev.Body = *api.Body
	}
	ev.IsBase64Encoded = api.IsBase64Encoded
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(ev); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
