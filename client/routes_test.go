package client_test

import (
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/client"
	"github.com/ocyless/ocyless/client/internal/testserver"
	"github.com/ocyless/ocyless/shared/httpapi"
)

// TestEveryRoute calls every method of the client once and checks that
// together they reach every route of the server's route table: a route
// added to the table without a client call fails here.
func TestEveryRoute(t *testing.T) {
	t.Parallel()
	srv := testserver.New(t)
	var mu sync.Mutex
	var sent []string
	rec := roundTrip(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		sent = append(sent, r.Method+" "+r.URL.EscapedPath())
		mu.Unlock()
		return http.DefaultTransport.RoundTrip(r)
	})
	c, err := client.New(srv.URL, client.WithTransport(rec))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	check(c.Health(ctx))
	_, err = c.Info(ctx)
	check(err)
	_, err = c.Version(ctx)
	check(err)
	doc, err := c.OpenAPI(ctx)
	check(err)
	if !strings.HasPrefix(string(doc), `{"openapi":"3.1.`) {
		t.Errorf("OpenAPI = %.40s…, want the document", doc)
	}
	_, err = c.PutQueue(ctx, "q", client.QueueSpec{Retries: new(uint64(5))})
	check(err)
	check(c.PatchQueue(ctx, "q", client.QueuePatch{Paused: new(false)}))
	_, err = c.GetQueue(ctx, "q")
	check(err)
	_, err = c.ListQueues(ctx)
	check(err)
	_, err = c.CreateJob(ctx, "q", client.JobSpec{Tags: []string{"t"}})
	check(err)
	_, err = c.CreateJobs(ctx, "q", []client.JobSpec{{}, {}})
	check(err)
	_, err = c.QueueSize(ctx, "q")
	check(err)
	_, err = c.QueueJobIDs(ctx, "q")
	check(err)
	_, err = c.JobIDsByTag(ctx, "t")
	check(err)
	_, err = c.ListQueueJobs(ctx, "q", client.ListOptions{})
	check(err)
	_, err = c.ListJobs(ctx, client.ListOptions{})
	check(err)
	j, err := c.TakeOne(ctx, "q", client.TakeOptions{Worker: "w"})
	check(err)
	_, err = c.TakeFrom(ctx, []string{"q"}, "", client.TakeOptions{Worker: "w"})
	check(err)
	check(c.Heartbeat(ctx, j.ID, j.Attempt))
	_, err = c.HeartbeatJobs(ctx, []client.BatchHeartbeat{{ID: j.ID, Attempt: j.Attempt}})
	check(err)
	_, err = c.UpdateJobs(ctx, []client.BatchUpdate{{ID: j.ID, JobUpdate: client.JobUpdate{Attempt: j.Attempt, Priority: new(int64(1))}}})
	check(err)
	_, _, err = c.UpdateJobsAndTake(ctx, []client.BatchUpdate{{ID: j.ID, JobUpdate: client.JobUpdate{Attempt: j.Attempt}}}, "q", client.TakeOptions{})
	check(err)
	check(c.SetJobOutput(ctx, j.ID, j.Attempt, 1))
	_, err = c.JobOutput(ctx, j.ID)
	check(err)
	_, err = c.JobStatus(ctx, j.ID)
	check(err)
	_, err = c.GetJob(ctx, j.ID)
	check(err)
	check(c.Fail(ctx, j.ID, j.Attempt, client.Failure{Error: &client.JobError{Group: "g"}, NoRetry: true}))
	_, err = c.Failures(ctx)
	check(err)
	_, err = c.FailureJobs(ctx, "g", client.FailureOptions{})
	check(err)
	_, err = c.RetryFailures(ctx, "g", 0, "")
	check(err)
	_, err = c.RetryJob(ctx, 2, client.RetryOptions{})
	check(err)
	_, err = c.Workers(ctx)
	check(err)
	_, err = c.WorkerJobs(ctx, "w")
	check(err)
	_, err = c.QueueStats(ctx, "q", time.Time{})
	check(err)
	_, err = c.PutSchedule(ctx, "q", "s", client.ScheduleSpec{Every: time.Hour})
	check(err)
	_, err = c.GetSchedule(ctx, "q", "s")
	check(err)
	_, err = c.ListSchedules(ctx, "q")
	check(err)
	check(c.DeleteSchedule(ctx, "q", "s"))
	check(c.DeleteJob(ctx, j.ID))
	check(c.DeleteQueue(ctx, "q"))

	for _, rt := range httpapi.Routes() {
		if rt.Name == "dashboard" { // an HTML page for browsers
			continue
		}
		re := regexp.MustCompile("^" + rt.Method + " " + regexp.MustCompile(`\{[a-z]+\}`).ReplaceAllString(rt.Pattern, `[^/]+`) + "$")
		hit := false
		for _, s := range sent {
			hit = hit || re.MatchString(s)
		}
		if !hit {
			t.Errorf("route %s (%s %s) was not called; requests: %s", rt.Name, rt.Method, rt.Pattern, strings.Join(sent, ", "))
		}
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
