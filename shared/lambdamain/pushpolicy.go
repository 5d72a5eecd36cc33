package lambdamain

import (
	"strconv"

	"github.com/ocyless/ocyless/shared/config"
	"github.com/ocyless/ocyless/shared/push"
)

// EnvPushLocal, set to true, makes a function judge push and callback
// targets as the local server does (http:// and loopback allowed; with
// OCYPOD_PUSH_ALLOWED_HOSTS, exactly those hosts): for sam local and the
// end-to-end tests, whose targets run on the same machine. The template
// never sets it.
const EnvPushLocal = "OCYPOD_PUSH_LOCAL"

// PushPolicy is the target policy of a function: [push] allowed_hosts in
// AWS mode (none unless listed, https only), or Local mode with
// EnvPushLocal.
func PushPolicy(getenv func(string) (string, bool), cfg config.Config) (*push.Policy, error) {
	mode := push.AWS
	if v, ok := getenv(EnvPushLocal); ok {
		if local, err := strconv.ParseBool(v); err == nil && local {
			mode = push.Local
		}
	}
	return push.NewPolicy(cfg.Push.AllowedHosts, mode)
}
