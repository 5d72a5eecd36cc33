package config_test

import (
	"fmt"

	"github.com/ocyless/ocyless/shared/config"
)

// env is a fixed environment for the examples; Load and FromEnv take
// os.LookupEnv in the programs.
func env(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

// A configuration file in Ocypod's format: ${VAR} and ${VAR=default} are
// substituted first, and every key left out keeps its default.
func ExampleParse() {
	file := `
[server]
port = ${PORT=8023}
max_body_size = "1MiB"

[redis]
url = "${REDIS_URL}"

[queue.emails]
timeout = "2m"
retries = 3
`
	cfg, err := config.Parse([]byte(file), env(map[string]string{"REDIS_URL": "redis://10.0.0.7:6379"}))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Server.Addr(), cfg.Server.MaxBodySize, cfg.Redis.Timeout)
	fmt.Println(cfg.QueueNames(), cfg.Queues["emails"].Timeout, cfg.Queues["emails"].Retries)
	_, err = config.Parse([]byte(file), env(nil))
	fmt.Println(err)
	// Output:
	// 127.0.0.1:8023 1048576 2s
	// [emails] 2m 3
	// could not interpolate environment variables into config, the following variables were not set: REDIS_URL
}

// The Lambda functions read OCYPOD_* variables only (no file); a bad value
// names its variable, and the URL's password never shows.
func ExampleFromEnv() {
	cfg, err := config.FromEnv(env(map[string]string{
		"OCYPOD_REDIS_URL":     "rediss://app:s3cret@cache.example:6379",
		"OCYPOD_REDIS_TIMEOUT": "500ms",
	}))
	fmt.Println(cfg.Redis.RedactedURL(), cfg.Redis.Timeout, err)
	_, err = config.FromEnv(env(map[string]string{"OCYPOD_KEY_NAMESPACE": "no spaces"}))
	fmt.Println(err)
	// Output:
	// rediss://REDACTED@cache.example:6379 500ms <nil>
	// redis.key_namespace (OCYPOD_KEY_NAMESPACE) "no spaces" is invalid: at most 64 characters among a-zA-Z0-9_.-
}

// Sizes read and print in the units of the configuration file.
func ExampleParseSize() {
	for _, s := range []string{"256KiB", "1.5 MB", "10kB", "1024"} {
		n, err := config.ParseSize(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(s, "=", n, "bytes =", config.FormatSize(n))
	}
	// Output:
	// 256KiB = 262144 bytes = 256KiB
	// 1.5 MB = 1500000 bytes = 1500000B
	// 10kB = 10000 bytes = 10000B
	// Unable to parse size '1024'
}
