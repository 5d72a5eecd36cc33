package reliability

import (
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// newClock is the clock every store of a test shares, so timeouts, retry
// delays and expiry happen without sleeping.
func newClock() *redistest.Clock {
	return redistest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}
