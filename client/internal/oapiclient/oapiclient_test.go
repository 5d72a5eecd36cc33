package oapiclient_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ocyless/ocyless/client/internal/oapiclient"
	"github.com/ocyless/ocyless/client/internal/testserver"
)

// TestGeneratedIsCurrent: client.gen.go is what oapi-codegen (pinned by
// go.mod's tool line) makes of today's openapi.json with default options,
// so the generator accepts the document.
func TestGeneratedIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the generator is built and run only in the full suite")
	}
	out := filepath.Join(t.TempDir(), "client.gen.go")
	cmd := exec.CommandContext(t.Context(), "go", "tool", "oapi-codegen", "-generate", "types,client",
		"-package", "oapiclient", "-o", out, "../../../shared/httpapi/openapi.json")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("oapi-codegen refuses openapi.json: %v\n%s", err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("client.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("client.gen.go is out of date: run make generate")
	}
}

// TestLifecycle runs a job's life through the generated client against
// the real route table and store.
func TestLifecycle(t *testing.T) {
	srv, err := testserver.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ctx := t.Context()
	c, err := oapiclient.NewClientWithResponses(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	timeout := "10m"
	put, err := c.PutQueueWithResponse(ctx, "gen", oapiclient.QueuePatch{Timeout: &timeout})
	if err != nil || put.StatusCode() != http.StatusCreated {
		t.Fatalf("PutQueue = %v, %v", err, put)
	}
	var input oapiclient.AnyJSON = map[string]any{"n": 21}
	created, err := c.CreateJobWithResponse(ctx, "gen", nil, oapiclient.CreateJobRequest{Input: &input})
	if err != nil || created.JSON201 == nil {
		t.Fatalf("CreateJob = %v, %d %s", err, created.StatusCode(), created.Body)
	}
	id := *created.JSON201
	worker := "gen-worker"
	next, err := c.NextJobWithResponse(ctx, "gen", &oapiclient.NextJobParams{Worker: &worker})
	if err != nil || next.JSON200 == nil {
		t.Fatalf("NextJob = %v, %d %s", err, next.StatusCode(), next.Body)
	}
	took, err := next.JSON200.AsTakeObject()
	if err != nil || took.Id != id || took.Attempt != 1 {
		t.Fatalf("took %+v, %v; want job %d attempt 1", took, err, id)
	}
	attempt := took.Attempt
	hb, err := c.HeartbeatWithResponse(ctx, id, &oapiclient.HeartbeatParams{Attempt: &attempt})
	if err != nil || hb.StatusCode() != http.StatusNoContent {
		t.Fatalf("Heartbeat = %v, %v", err, hb)
	}
	var output oapiclient.AnyJSON = map[string]any{"double": 42}
	upd, err := c.UpdateJobWithResponse(ctx, id, &oapiclient.UpdateJobParams{Attempt: &attempt},
		oapiclient.JobUpdate{Status: "completed", Output: &output})
	if err != nil || upd.StatusCode() != http.StatusNoContent {
		t.Fatalf("UpdateJob = %v, %d %s", err, upd.StatusCode(), upd.Body)
	}
	job, err := c.GetJobWithResponse(ctx, id, nil)
	if err != nil || job.JSON200 == nil {
		t.Fatalf("GetJob = %v, %v", err, job)
	}
	got, _ := json.Marshal(job.JSON200.Output)
	if job.JSON200.Status == nil || *job.JSON200.Status != "completed" || string(got) != `{"double":42}` {
		t.Errorf("job = %s", job.Body)
	}
	// A refusal reaches the caller as its status and text.
	missing, err := c.JobStatusWithResponse(ctx, id+1000)
	if err != nil || missing.StatusCode() != http.StatusNotFound {
		t.Errorf("JobStatus(missing) = %v, %v", err, missing)
	}
}
