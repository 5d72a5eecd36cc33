package httpapi

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

// envStore is the real store as the tests use it. A JobModelStore method
// the store does not implement yet falls through to lacking's, one level
// deeper (Go picks the shallowest method), which fails the request with a
// 500 naming the method; TestStoreImplementsStore says which ones.
type envStore struct {
	*redisstore.Store
	lacking
}

type lacking struct{ notImplemented }

type notImplemented struct{}

func lacks(method string) error {
	return ocypod.Internal(errors.New("redisstore.Store lacks " + method))
}

func (notImplemented) ListJobs(context.Context, ocypod.ListRequest) (ocypod.JobPage, error) {
	return ocypod.JobPage{}, lacks("ListJobs")
}
func (notImplemented) Failures(context.Context) (map[string]uint64, error) {
	return nil, lacks("Failures")
}
func (notImplemented) FailureJobs(context.Context, string, int, string) (ocypod.FailurePage, error) {
	return ocypod.FailurePage{}, lacks("FailureJobs")
}
func (notImplemented) RetryFailures(context.Context, string, int, string) (int, error) {
	return 0, lacks("RetryFailures")
}
func (notImplemented) Workers(context.Context) ([]ocypod.Worker, error) {
	return nil, lacks("Workers")
}
func (notImplemented) Worker(context.Context, string) (ocypod.WorkerJobs, error) {
	return ocypod.WorkerJobs{}, lacks("Worker")
}
func (notImplemented) QueueStats(context.Context, string, time.Time) (ocypod.QueueStats, error) {
	return ocypod.QueueStats{}, lacks("QueueStats")
}
func (notImplemented) PutSchedule(context.Context, ocypod.Schedule) (bool, error) {
	return false, lacks("PutSchedule")
}
func (notImplemented) GetSchedule(context.Context, string, string) (ocypod.Schedule, error) {
	return ocypod.Schedule{}, lacks("GetSchedule")
}
func (notImplemented) DeleteSchedule(context.Context, string, string) error {
	return lacks("DeleteSchedule")
}
func (notImplemented) ListSchedules(context.Context, string) ([]ocypod.Schedule, error) {
	return nil, lacks("ListSchedules")
}

// TestStoreImplementsStore fails, naming them, while *redisstore.Store
// lacks methods of Store: the tests of those routes fail with 500s until
// it has them.
func TestStoreImplementsStore(t *testing.T) {
	t.Parallel()
	want := reflect.TypeFor[Store]()
	have := reflect.TypeFor[*redisstore.Store]()
	for i := range want.NumMethod() {
		m := want.Method(i)
		got, ok := have.MethodByName(m.Name)
		if !ok {
			t.Errorf("*redisstore.Store has no method %s", m.Name)
			continue
		}
		// got.Type has the receiver first; compare the rest.
		if got.Type.NumIn()-1 != m.Type.NumIn() || got.Type.NumOut() != m.Type.NumOut() {
			t.Errorf("*redisstore.Store.%s is %v, want %v", m.Name, got.Type, m.Type)
		}
	}
}
