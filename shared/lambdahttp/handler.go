package lambdahttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

// ErrNotHTTPEvent is returned (wrapped) by Invoke for a payload that is not
// an API Gateway proxy event, e.g. a direct invocation with other JSON.
var ErrNotHTTPEvent = errors.New("not an API Gateway proxy event")

// Handler is a Lambda handler (it implements aws-lambda-go's lambda.Handler)
// serving an http.Handler to API Gateway proxy events of both payload
// formats. It is safe for concurrent use.
type Handler struct {
	next http.Handler
	log  *slog.Logger
	v1   *httpadapter.HandlerAdapter
	v2   *httpadapter.HandlerAdapterV2
	alb  *httpadapter.HandlerAdapterALB
}

// New returns a Handler serving next. A nil logger discards logs.
func New(next http.Handler, logger *slog.Logger) *Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// The adapters only convert events; serving happens in serve, so their
	// own handler is never called.
	unused := http.NotFoundHandler()
	return &Handler{next: next, log: logger, v1: httpadapter.New(unused), v2: httpadapter.NewV2(unused), alb: httpadapter.NewALB(unused)}
}

// probe holds the fields that tell the payload formats apart.
type probe struct {
	Version        string `json:"version"`
	HTTPMethod     string `json:"httpMethod"`
	RequestContext struct {
		HTTP struct {
			Method string `json:"method"`
		} `json:"http"`
		ELB *struct{} `json:"elb"`
	} `json:"requestContext"`
}

// Invoke handles one Lambda invocation: payload is the raw event JSON and
// the result is the JSON of the proxy response (events.APIGatewayV2HTTPResponse
// for payload 2.0, events.ALBTargetGroupResponse for an Application Load
// Balancer's event, events.APIGatewayProxyResponse otherwise). Requests that
// cannot be converted get a 400 response; an error is returned only when the
// payload is not an API Gateway proxy event at all (ErrNotHTTPEvent or a JSON
// error), which neither API Gateway nor a load balancer sends.
func (h *Handler) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	var p probe
	if err := json.Unmarshal(payload, &p); err != nil {
		return nil, fmt.Errorf("lambdahttp: decode event: %w", err)
	}
	switch {
	case p.RequestContext.ELB != nil:
		var ev events.ALBTargetGroupRequest
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, fmt.Errorf("lambdahttp: decode ALB event: %w", err)
		}
		return json.Marshal(h.ServeALB(ctx, ev))
	case p.Version == "2.0" || (p.HTTPMethod == "" && p.RequestContext.HTTP.Method != ""):
		var ev events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, fmt.Errorf("lambdahttp: decode payload 2.0 event: %w", err)
		}
		return json.Marshal(h.ServeV2(ctx, ev))
	case p.HTTPMethod != "":
		var ev events.APIGatewayProxyRequest
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, fmt.Errorf("lambdahttp: decode payload 1.0 event: %w", err)
		}
		return json.Marshal(h.ServeV1(ctx, ev))
	default:
		return nil, fmt.Errorf("lambdahttp: %w (no version 2.0, httpMethod or requestContext.http.method)", ErrNotHTTPEvent)
	}
}

// ServeV2 serves one HTTP API payload 2.0 event.
func (h *Handler) ServeV2(ctx context.Context, ev events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPResponse {
	headers, cookies := ev.Headers, ev.Cookies
	ev.Headers, ev.Cookies = nil, nil // set below, without comma splitting
	path := ev.RawPath
	if path == "" {
		path = ev.RequestContext.HTTP.Path
	}
	ev.RawPath = escapePath(stripStage(path, ev.RequestContext.Stage))
	r, err := h.v2.EventToRequestWithContext(ctx, ev)
	if err != nil {
		h.log.WarnContext(ctx, "lambdahttp: unusable payload 2.0 event", slog.String("error", err.Error()))
		return badRequestV2()
	}
	r.Header = headerFromMap(headers)
	if len(cookies) > 0 {
		r.Header.Add("Cookie", joinCookies(cookies))
	}
	finishRequest(r, ev.PathParameters)

	w := core.NewProxyResponseWriterV2()
	if !h.serve(w, r) {
		w = core.NewProxyResponseWriterV2()
		writeInternalError(w)
	}
	resp, err := w.GetProxyResponse()
	if err != nil { // unreachable: serve always sets a status
		h.log.ErrorContext(ctx, "lambdahttp: build response", slog.String("error", err.Error()))
		return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusInternalServerError}
	}
	return resp
}

// ServeV1 serves one REST API (or HTTP API payload 1.0) event.
func (h *Handler) ServeV1(ctx context.Context, ev events.APIGatewayProxyRequest) events.APIGatewayProxyResponse {
	ev.Path = escapePath(ev.Path)
	r, err := h.v1.EventToRequestWithContext(ctx, ev)
	if err != nil {
		h.log.WarnContext(ctx, "lambdahttp: unusable payload 1.0 event", slog.String("error", err.Error()))
		return badRequestV1()
	}
	finishRequest(r, ev.PathParameters)

	w := core.NewProxyResponseWriter()
	if !h.serve(w, r) {
		w = core.NewProxyResponseWriter()
		writeInternalError(w)
	}
	resp, err := w.GetProxyResponse()
	if err != nil { // unreachable: serve always sets a status
		h.log.ErrorContext(ctx, "lambdahttp: build response", slog.String("error", err.Error()))
		return events.APIGatewayProxyResponse{StatusCode: http.StatusInternalServerError}
	}
	return resp
}

// ServeALB serves one Application Load Balancer event of a target group
// with multi-value headers enabled (template.yaml turns it on, so repeated
// query keys and headers arrive whole). Unlike API Gateway, the load
// balancer passes the query string as the client sent it, percent-encoded;
// the proxy encodes what it is given, so keys and values are decoded
// first. The path arrives encoded as sent and is used as it is.
func (h *Handler) ServeALB(ctx context.Context, ev events.ALBTargetGroupRequest) events.ALBTargetGroupResponse {
	query, ok := decodeALBQuery(ev)
	if !ok {
		return badRequestALB()
	}
	ev.MultiValueQueryStringParameters, ev.QueryStringParameters = query, nil
	single := ev.MultiValueHeaders == nil
	if single && ev.Headers != nil {
		ev.MultiValueHeaders = make(map[string][]string, len(ev.Headers))
		for k, v := range ev.Headers {
			ev.MultiValueHeaders[k] = []string{v}
		}
	}
	ev.Headers = nil
	r, err := h.alb.EventToRequestWithContext(ctx, ev)
	if err != nil {
		h.log.WarnContext(ctx, "lambdahttp: unusable ALB event", slog.String("error", err.Error()))
		return badRequestALB()
	}
	finishRequest(r, nil)

	w := core.NewProxyResponseWriterALB()
	if !h.serve(w, r) {
		w = core.NewProxyResponseWriterALB()
		writeInternalError(w)
	}
	resp, err := w.GetProxyResponse()
	if err != nil { // unreachable: serve always sets a status
		h.log.ErrorContext(ctx, "lambdahttp: build response", slog.String("error", err.Error()))
		return events.ALBTargetGroupResponse{StatusCode: http.StatusInternalServerError, StatusDescription: "500 Internal Server Error"}
	}
	// The load balancer wants "<code> <reason>"; the proxy gives the reason only.
	resp.StatusDescription = fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	if single {
		// A target group without multi-value headers reads "headers" only.
		resp.Headers = make(map[string]string, len(resp.MultiValueHeaders))
		for k, vs := range resp.MultiValueHeaders {
			resp.Headers[k] = strings.Join(vs, ", ")
		}
		resp.MultiValueHeaders = nil
	}
	return resp
}
