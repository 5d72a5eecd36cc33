package lambdamain

import "testing"

// TestAutoPipeline: a function serving one invocation at a time sends each
// Redis call on its own; one serving several at once pipelines them.
func TestAutoPipeline(t *testing.T) {
	for conc, want := range map[int]int{0: -1, 1: -1, 2: 0, 64: 0} {
		if got := autoPipeline(conc); got != want {
			t.Errorf("autoPipeline(%d) = %d, want %d", conc, got, want)
		}
	}
}
