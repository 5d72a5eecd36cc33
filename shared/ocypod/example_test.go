package ocypod_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Durations use Ocypod's grammar on the way in and its format on the way
// out; stored settings keep whole seconds.
func ExampleParseDuration() {
	for _, s := range []string{"90s", "1h 30m", "2days", "1500ms"} {
		d, err := ocypod.ParseDuration(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%q -> %s, stored as %s\n", s, d, d.Truncate())
	}
	_, err := ocypod.ParseDuration("soon")
	fmt.Println(err)
	// Output:
	// "90s" -> 1m 30s, stored as 1m 30s
	// "1h 30m" -> 1h 30m, stored as 1h 30m
	// "2days" -> 2days, stored as 2days
	// "1500ms" -> 1s 500ms, stored as 1s
	// expected number at 0
}

// A Duration is JSON's string form of itself, as in a queue's settings.
func ExampleDuration_MarshalJSON() {
	b, _ := json.Marshal(struct {
		Timeout ocypod.Duration `json:"timeout"`
	}{ocypod.FromStd(36 * time.Hour)})
	fmt.Println(string(b))
	// Output:
	// {"timeout":"1day 12h"}
}

// The transition table decides which status changes a client may ask for.
func ExampleCanTransition() {
	fmt.Println(ocypod.CanTransition(ocypod.StatusRunning, ocypod.StatusCompleted))
	fmt.Println(ocypod.CanTransition(ocypod.StatusCompleted, ocypod.StatusRunning))
	fmt.Println("cancelled from:", ocypod.AllowedFrom(ocypod.StatusCancelled))
	// Output:
	// true
	// false
	// cancelled from: [queued running failed scheduled waiting]
}

// Errors carry the text a client sees; anything else is a generic 500.
func ExampleErrorMessage() {
	fmt.Println(ocypod.ErrorMessage(ocypod.JobNotFound(42)))
	fmt.Println(ocypod.ErrorKind(ocypod.JobNotFound(42)) == ocypod.KindNotFound)
	fmt.Println(ocypod.ErrorMessage(fmt.Errorf("dial tcp 10.0.0.7:6379: connection refused")))
	// Output:
	// Job with ID 42 does not exist
	// true
	// Internal server error
}
