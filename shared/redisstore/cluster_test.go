package redisstore_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// scriptRecorder is a go-redis hook that records every script sent, alone
// or in a pipeline: the SHA1 of EVAL and EVALSHA, the function of FCALL.
type scriptRecorder struct{ seen sync.Map }

func (r *scriptRecorder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *scriptRecorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.record(cmd)
		return next(ctx, cmd)
	}
}

func (r *scriptRecorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			r.record(cmd)
		}
		return next(ctx, cmds)
	}
}

// record notes the script cmd runs, if it runs one.
func (r *scriptRecorder) record(cmd redis.Cmder) {
	args := cmd.Args()
	if len(args) < 2 {
		return
	}
	switch strings.ToLower(fmt.Sprint(args[0])) {
	case "evalsha", "fcall":
		r.seen.Store(fmt.Sprint(args[1]), true)
	case "eval":
		sum := sha1.Sum([]byte(fmt.Sprint(args[1])))
		r.seen.Store(hex.EncodeToString(sum[:]), true)
	}
}

var (
	clusterScripts  = &scriptRecorder{}
	clusterHookOnce sync.Once
	clusterCases    atomic.Int64 // conformance cases run on the cluster backend
)

// clusterClient is the shared cluster server's client with the recorder.
func clusterClient(tb testing.TB) redis.UniversalClient {
	rdb := redistest.SharedCluster(tb).Client()
	clusterHookOnce.Do(func() { rdb.AddHook(clusterScripts) })
	clusterCases.Add(1)
	return rdb
}

// checkClusterRanEveryScript fails t unless every script went through the
// cluster client: together with the conformance suite on the cluster
// backend, it proves that no script touches keys of two slots. It checks
// only when every case ran (not under a -run filter).
func checkClusterRanEveryScript(t *testing.T, cases int) {
	if int(clusterCases.Load()) < cases {
		t.Logf("only %d of %d cases ran on the cluster backend: script coverage not checked", clusterCases.Load(), cases)
		return
	}
	// redis-server 7.0 does not refuse a script's undeclared key of another
	// slot on a single node, so check that no key escaped its hash tag.
	keys, err := redistest.SharedCluster(t).Client().Keys(context.Background(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	tagged := regexp.MustCompile(`^\{[A-Za-z0-9_.-]{1,64}(:[0-9]+:[0-9a-z]+)?\}:`)
	for _, k := range keys {
		if !tagged.MatchString(k) {
			t.Errorf("key %q is outside every namespace's hash tag", k)
		}
	}
	for name, ids := range redisstore.ScriptIDs() {
		_, bySHA := clusterScripts.seen.Load(ids[0])
		_, byName := clusterScripts.seen.Load(ids[1])
		if !bySHA && !byName {
			t.Errorf("script %s never ran on the cluster backend", name)
		}
	}
}
