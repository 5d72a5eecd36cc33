package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
)

// Health checks that the server reaches its Redis (GET /health): nil when
// healthy, else an *Error whose Message is the server's reason (503
// "Failed to connect to Redis: timed out").
func (c *Client) Health(ctx context.Context) error {
	cl := call{method: http.MethodGet, path: "/health", safety: idempotent}
	_, err := c.do(ctx, cl)
	var e *Error
	if errors.As(err, &e) && e.StatusCode == http.StatusServiceUnavailable {
		// The body is {"status":"unhealthy","error":"..."}: keep the reason.
		var h struct {
			Error string `json:"error"`
		}
		if json.Unmarshal([]byte(e.Message), &h) == nil && h.Error != "" {
			e.Message = h.Error
		}
	}
	return err
}

// Version returns the Ocypod API version the server implements (GET
// /info/version), such as "0.8.0".
func (c *Client) Version(ctx context.Context) (string, error) {
	var v string
	return v, c.get(ctx, "/info/version", nil, &v)
}

// OpenAPI returns the server's OpenAPI 3.1 document (GET /openapi.json).
func (c *Client) OpenAPI(ctx context.Context) (json.RawMessage, error) {
	var doc json.RawMessage
	return doc, c.get(ctx, "/openapi.json", nil, &doc)
}

// QueueCounts are a queue's job counts by status.
type QueueCounts struct {
	Queued    uint64 `json:"queued"`
	Running   uint64 `json:"running"`
	Failed    uint64 `json:"failed"`
	Completed uint64 `json:"completed"`
	Cancelled uint64 `json:"cancelled"`
	TimedOut  uint64 `json:"timed_out"`
	Scheduled uint64 `json:"scheduled"`
	Waiting   uint64 `json:"waiting"`
}

// Statistics are the server's global counters.
type Statistics struct {
	TotalJobsCreated   uint64 `json:"total_jobs_created"`
	TotalJobsCompleted uint64 `json:"total_jobs_completed"`
	TotalJobsRetried   uint64 `json:"total_jobs_retried"`
	TotalJobsFailed    uint64 `json:"total_jobs_failed"`
	TotalJobsTimedOut  uint64 `json:"total_jobs_timed_out"`
	TotalJobsCancelled uint64 `json:"total_jobs_cancelled"`
}

// Info is GET /info's answer.
type Info struct {
	Queues     map[string]QueueCounts `json:"queues"`
	Statistics Statistics             `json:"statistics"`
}

// Info returns the job counts of every queue and the global counters
// (GET /info).
func (c *Client) Info(ctx context.Context) (*Info, error) {
	var info Info
	if err := c.get(ctx, "/info", nil, &info); err != nil {
		return nil, err
	}
	return &info, nil
}
