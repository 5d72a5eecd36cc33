//go:build layoutfixture

package redisstore_test

import (
	"encoding/json"
	"os"
	"strconv"
	"testing"

	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// TestWriteLayout3Fixture writes testdata/layout3.json: namespaces of one
// partition and four written by the store's scripts of layout version 3
// (writeLayout3Scenario), each with what that store answered about them
// right after (layout3Answers). An upgrade to a later layout is tested by
// loading the dump, upgrading it and comparing the answers
// (TestLayout3Fixture). It was run with the store of layout version 3:
//
//	go test -tags layoutfixture -run TestWriteLayout3Fixture ./shared/redisstore/
func TestWriteLayout3Fixture(t *testing.T) {
	out := map[string]layout3Namespace{}
	for _, P := range []int{1, 4} {
		h := newHarness(t, redistest.Shared(t).Client(), P, redisstore.Options{})
		writeLayout3Scenario(t, h)
		ns := layout3Namespace{Now: h.clock.Now(), Keys: h.dumpPartitions()}
		ns.Answers = layout3Answers(t, h)
		out[strconv.Itoa(P)] = ns
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("testdata/layout3.json", append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
