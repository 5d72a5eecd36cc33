package lambdahttp

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/aws/aws-lambda-go/events"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// serve runs the wrapped handler on r, writing to w. It reports false if
// the handler panicked; w then holds a partial response to discard.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request) (ok bool) {
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		if v := recover(); v != nil {
			h.log.ErrorContext(r.Context(), "lambdahttp: handler panicked",
				slog.String("panic", fmt.Sprint(v)), slog.String("stack", string(debug.Stack())))
			ok = false
			return
		}
		if !sw.wroteHeader {
			// net/http answers 200 when a handler writes nothing; the proxy
			// would answer 504 and report an error.
			sw.WriteHeader(http.StatusOK)
		}
	}()
	h.next.ServeHTTP(sw, r)
	return true
}

// statusWriter records whether a status was written and, like net/http,
// ignores every WriteHeader after the first.
type statusWriter struct {
	http.ResponseWriter
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(code int) {
	if w.wroteHeader || code < 200 { // 1xx informational responses don't exist here
		return
	}
	w.wroteHeader = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the proxy's writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// writeInternalError answers 500 in Ocypod's plain-text error style.
func writeInternalError(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = io.WriteString(w, ocypod.InternalMessage)
}

const badRequestBody = "Bad request"

func badRequestV2() events.APIGatewayV2HTTPResponse {
	return events.APIGatewayV2HTTPResponse{
		StatusCode: http.StatusBadRequest,
		Headers:    map[string]string{"Content-Type": "text/plain; charset=utf-8"},
		Body:       badRequestBody,
	}
}

func badRequestV1() events.APIGatewayProxyResponse {
	return events.APIGatewayProxyResponse{
		StatusCode:        http.StatusBadRequest,
		MultiValueHeaders: map[string][]string{"Content-Type": {"text/plain; charset=utf-8"}},
		Body:              badRequestBody,
	}
}

func badRequestALB() events.ALBTargetGroupResponse {
	return events.ALBTargetGroupResponse{
		StatusCode:        http.StatusBadRequest,
		StatusDescription: "400 Bad Request",
		MultiValueHeaders: map[string][]string{"Content-Type": {"text/plain; charset=utf-8"}},
		Body:              badRequestBody,
	}
}
