package config

import (
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// allEnv sets every OCYPOD_* variable to a non-default value.
var allEnv = map[string]string{
	"OCYPOD_REDIS_URL":              "rediss://cache.example.com:6379",
	"OCYPOD_KEY_NAMESPACE":          "prod",
	"OCYPOD_REDIS_CLUSTER":          "true",
	"OCYPOD_REDIS_POOL_SIZE":        "4",
	"OCYPOD_REDIS_TIMEOUT":          "500ms",
	"OCYPOD_REDIS_IAM_USER":         "app",
	"OCYPOD_REDIS_CACHE_NAME":       "jobs",
	"OCYPOD_REDIS_SERVERLESS":       "1",
	"OCYPOD_MAX_BODY_SIZE":          "1MiB",
	"OCYPOD_NEXT_JOB_DELAY":         "100ms",
	"OCYPOD_LOG_LEVEL":              "WARN",
	"OCYPOD_HOST":                   "0.0.0.0",
	"OCYPOD_PORT":                   "9001",
	"OCYPOD_ALLOWED_HOSTS":          " Queue.Example , 10.0.0.7:9001,[::1]",
	"OCYPOD_EMBEDDED_MAX_MEMORY":    "2GiB",
	"OCYPOD_TIMEOUT_CHECK_INTERVAL": "5s",
	"OCYPOD_RETRY_CHECK_INTERVAL":   "6s",
	"OCYPOD_EXPIRY_CHECK_INTERVAL":  "7s",
	"OCYPOD_SHUTDOWN_TIMEOUT":       "8s 900ms",
	"OCYPOD_SWEEP_BUDGET":           "20s",
	"OCYPOD_SWEEP_BATCH":            "250",
	"OCYPOD_PARTITIONS":             "12",
	"OCYPOD_REDIS_SCRIPTS":          "eval",
	"OCYPOD_WORKER_EXPIRY":          "10m",
	"OCYPOD_STATS_HISTORY":          "7",
	"OCYPOD_MAX_LONG_POLLS":         "64",
	"OCYPOD_STRICT_INPUT":           "true",
	"OCYPOD_PUSH_ALLOWED_HOSTS":     "hooks.example, 10.0.0.8:8443",
}

func TestFromEnvEveryVariable(t *testing.T) {
	t.Parallel()
	c, err := FromEnv(env(allEnv))
	if err != nil {
		t.Fatalf("FromEnv error = %v", err)
	}
	want := Config{
		Server: Server{
			Host: "0.0.0.0", Port: 9001, MaxBodySize: 1 << 20, TimeoutCheckInterval: 5 * time.Second,
			RetryCheckInterval: 6 * time.Second, ExpiryCheckInterval: 7 * time.Second, ShutdownTimeout: 8 * time.Second,
			NextJobDelay: 100 * time.Millisecond, LogLevel: slog.LevelWarn,
			AllowedHosts: []string{"queue.example", "10.0.0.7:9001", "[::1]"},
			WorkerExpiry: 10 * time.Minute, StatsHistory: 7, MaxLongPolls: 64, StrictInput: true,
		},
		Redis: Redis{
			URL: "rediss://cache.example.com:6379", KeyNamespace: "prod", ClusterMode: true, PoolSize: 4,
			Timeout: 500 * time.Millisecond, IAMUser: "app", CacheName: "jobs", Serverless: true,
			EmbeddedMaxMemory: 2 << 30, Partitions: 12, Scripts: "eval",
		},
		Sweep: Sweep{Budget: 20 * time.Second, Batch: 250},
		Push:  Push{AllowedHosts: []string{"hooks.example", "10.0.0.8:8443"}},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("FromEnv =\n%v\nwant\n%v", c, want)
	}
	// Every documented variable is exercised here.
	for _, v := range EnvVars() {
		if _, ok := allEnv[v.Name]; !ok {
			t.Errorf("EnvVars has %s, which this test does not set", v.Name)
		}
		if v.Description == "" {
			t.Errorf("EnvVars entry %s lacks documentation", v.Name)
		}
	}
	if len(EnvVars()) != len(allEnv) {
		t.Errorf("len(EnvVars()) = %d, want %d", len(EnvVars()), len(allEnv))
	}
}

func TestEnvOverridesFile(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "c.toml")
	file := "[server]\nport = 9000\nhost = \"${HOST=10.0.0.1}\"\nlog_level = \"debug\"\n[redis]\nkey_namespace = \"file\"\nurl = \"redis://file:6379\"\n"
	if err := os.WriteFile(p, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		env   map[string]string
		check func(Config) bool
	}{
		"file only": {nil, func(c Config) bool {
			return c.Server.Port == 9000 && c.Redis.KeyNamespace == "file" && c.Server.Host == "10.0.0.1"
		}},
		"env wins":                {map[string]string{"OCYPOD_PORT": "9100", "OCYPOD_KEY_NAMESPACE": "env"}, func(c Config) bool { return c.Server.Port == 9100 && c.Redis.KeyNamespace == "env" }},
		"empty env is unset":      {map[string]string{"OCYPOD_PORT": "", "OCYPOD_KEY_NAMESPACE": ""}, func(c Config) bool { return c.Server.Port == 9000 && c.Redis.KeyNamespace == "file" }},
		"interpolation vs env":    {map[string]string{"HOST": "::1", "OCYPOD_HOST": "127.0.0.2"}, func(c Config) bool { return c.Server.Host == "127.0.0.2" }},
		"interpolation only":      {map[string]string{"HOST": "::1"}, func(c Config) bool { return c.Server.Host == "::1" }},
		"env url":                 {map[string]string{"OCYPOD_REDIS_URL": "unix:///tmp/x.sock"}, func(c Config) bool { return c.Redis.URL == "unix:///tmp/x.sock" }},
		"env log level":           {map[string]string{"OCYPOD_LOG_LEVEL": "trace"}, func(c Config) bool { return c.Server.LogLevel == LevelTrace }},
		"max body bytes":          {map[string]string{"OCYPOD_MAX_BODY_SIZE": "1048576"}, func(c Config) bool { return c.Server.MaxBodySize == 1<<20 }},
		"max body zero":           {map[string]string{"OCYPOD_MAX_BODY_SIZE": "0"}, func(c Config) bool { return c.Server.MaxBodySize == 256<<10 }},
		"max body KB":             {map[string]string{"OCYPOD_MAX_BODY_SIZE": "1KB"}, func(c Config) bool { return c.Server.MaxBodySize == 1024 }},
		"bool false":              {map[string]string{"OCYPOD_REDIS_CLUSTER": "false"}, func(c Config) bool { return !c.Redis.ClusterMode }},
		"shutdown truncated":      {map[string]string{"OCYPOD_SHUTDOWN_TIMEOUT": "2500ms"}, func(c Config) bool { return c.Server.ShutdownTimeout == 2*time.Second }},
		"pool zero":               {map[string]string{"OCYPOD_REDIS_POOL_SIZE": "0"}, func(c Config) bool { return c.Redis.PoolSize == 0 }},
		"allowed hosts replace":   {map[string]string{"OCYPOD_ALLOWED_HOSTS": "a.example"}, func(c Config) bool { return len(c.Server.AllowedHosts) == 1 && c.Server.AllowedHosts[0] == "a.example" }},
		"allowed hosts blank":     {map[string]string{"OCYPOD_ALLOWED_HOSTS": " "}, func(c Config) bool { return c.Server.AllowedHosts == nil }},
		"embedded memory":         {map[string]string{"OCYPOD_EMBEDDED_MAX_MEMORY": " 64MiB "}, func(c Config) bool { return c.Redis.EmbeddedMaxMemory == 64<<20 }},
		"interval keeps fraction": {map[string]string{"OCYPOD_RETRY_CHECK_INTERVAL": "100ms"}, func(c Config) bool { return c.Server.RetryCheckInterval == 100*time.Millisecond }},
	}
	for name, tt := range tests {
		c, err := Load(p, env(tt.env))
		if err != nil {
			t.Errorf("%s: Load error = %v", name, err)
			continue
		}
		if !tt.check(c) {
			t.Errorf("%s: Load = %v: check failed", name, c)
		}
	}
}

func TestEnvErrors(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		env  map[string]string
		want string
	}{
		"port text":             {map[string]string{"OCYPOD_PORT": "http"}, `OCYPOD_PORT: expected a port number 0..65535, got "http"`},
		"port range":            {map[string]string{"OCYPOD_PORT": "65536"}, "OCYPOD_PORT: expected a port number"},
		"bool":                  {map[string]string{"OCYPOD_REDIS_CLUSTER": "yes"}, `OCYPOD_REDIS_CLUSTER: expected true or false, got "yes"`},
		"serverless bool":       {map[string]string{"OCYPOD_REDIS_SERVERLESS": "on"}, "OCYPOD_REDIS_SERVERLESS: expected true or false"},
		"pool negative":         {map[string]string{"OCYPOD_REDIS_POOL_SIZE": "-1"}, `OCYPOD_REDIS_POOL_SIZE: expected an integer in 0..2147483647, got "-1"`},
		"batch zero":            {map[string]string{"OCYPOD_SWEEP_BATCH": "0"}, "OCYPOD_SWEEP_BATCH: expected an integer in 1..10000"},
		"batch too big":         {map[string]string{"OCYPOD_SWEEP_BATCH": "10001"}, "OCYPOD_SWEEP_BATCH: expected an integer in 1..10000"},
		"budget zero":           {map[string]string{"OCYPOD_SWEEP_BUDGET": "0s"}, "sweep.budget (OCYPOD_SWEEP_BUDGET) must be greater than zero"},
		"duration":              {map[string]string{"OCYPOD_REDIS_TIMEOUT": "2"}, `OCYPOD_REDIS_TIMEOUT: invalid duration "2": time unit needed`},
		"timeout zero":          {map[string]string{"OCYPOD_REDIS_TIMEOUT": "0s"}, "redis.timeout (OCYPOD_REDIS_TIMEOUT) must be greater than zero"},
		"zero interval":         {map[string]string{"OCYPOD_EXPIRY_CHECK_INTERVAL": "0s"}, "server.expiry_check_interval (OCYPOD_EXPIRY_CHECK_INTERVAL) must be greater than zero"},
		"shutdown max":          {map[string]string{"OCYPOD_SHUTDOWN_TIMEOUT": "65536s"}, "Maximum shutdown_timeout is 65535 seconds"},
		"log level":             {map[string]string{"OCYPOD_LOG_LEVEL": "loud"}, "OCYPOD_LOG_LEVEL: Invalid log level: loud"},
		"body size":             {map[string]string{"OCYPOD_MAX_BODY_SIZE": "1.5"}, "OCYPOD_MAX_BODY_SIZE: Unable to parse size '1.5'"},
		"body size neg":         {map[string]string{"OCYPOD_MAX_BODY_SIZE": "-5"}, "OCYPOD_MAX_BODY_SIZE: Unable to parse size '-5'"},
		"namespace":             {map[string]string{"OCYPOD_KEY_NAMESPACE": "a:b"}, `redis.key_namespace (OCYPOD_KEY_NAMESPACE) "a:b" is invalid`},
		"url scheme":            {map[string]string{"OCYPOD_REDIS_URL": "https://h"}, "redis.url (OCYPOD_REDIS_URL) \"https://h\": scheme must be redis, rediss or unix"},
		"iam needs tls":         {map[string]string{"OCYPOD_REDIS_URL": "redis://h", "OCYPOD_REDIS_IAM_USER": "u", "OCYPOD_REDIS_CACHE_NAME": "c"}, "OCYPOD_REDIS_IAM_USER) needs a TLS URL"},
		"iam needs cache":       {map[string]string{"OCYPOD_REDIS_URL": "rediss://h", "OCYPOD_REDIS_IAM_USER": "u"}, "needs redis.cache_name (OCYPOD_REDIS_CACHE_NAME)"},
		"allowed hosts url":     {map[string]string{"OCYPOD_ALLOWED_HOSTS": "localhost,http://x"}, `OCYPOD_ALLOWED_HOSTS: entry 2 "http://x": a host name, not a URL`},
		"allowed hosts empty":   {map[string]string{"OCYPOD_ALLOWED_HOSTS": "a,,b"}, `OCYPOD_ALLOWED_HOSTS: entry 2 "": empty host`},
		"allowed hosts space":   {map[string]string{"OCYPOD_ALLOWED_HOSTS": "a b"}, `OCYPOD_ALLOWED_HOSTS: entry 1 "a b"`},
		"embedded memory bare":  {map[string]string{"OCYPOD_EMBEDDED_MAX_MEMORY": "1000000"}, "OCYPOD_EMBEDDED_MAX_MEMORY: Unable to parse size '1000000'"},
		"embedded memory small": {map[string]string{"OCYPOD_EMBEDDED_MAX_MEMORY": "1000kB"}, "redis.embedded_max_memory (OCYPOD_EMBEDDED_MAX_MEMORY) must be at least 1MiB, got 1000000B"},
		"cache name slash":      {map[string]string{"OCYPOD_REDIS_URL": "rediss://h", "OCYPOD_REDIS_IAM_USER": "u", "OCYPOD_REDIS_CACHE_NAME": "a/b"}, "cannot contain spaces or '/'"},
	}
	for name, tt := range tests {
		_, err := FromEnv(env(tt.env))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: FromEnv error = %v, want it to contain %q", name, err, tt.want)
		}
	}
}

// TestSecretsNeverShown checks that no error, String, GoString or LogValue
// output contains a password from the Redis URL.
func TestSecretsNeverShown(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-P4ss"
	urls := []string{
		"redis://user:" + secret + "@host:6379/0",
		"rediss://:" + secret + "@host:6379",
		"redis://" + secret + "@host",
		"redis://user:" + secret + "@host:6379/x",             // bad path
		"http://user:" + secret + "@host",                     // bad scheme
		"redis://user:" + secret + "@",                        // no host
		"redis://us/er:" + secret + "@host",                   // '/' in user info: the password lands in the path
		"redis://user:pa ss" + secret + "@host",               // space: url.Parse fails
		"redis://user:" + secret + "@host:port",               // bad port: url.Parse fails and quotes it
		"redis://host?password=" + secret,                     // query
		"redis://host#" + secret,                              // fragment
		"unix://user:" + secret + "@/tmp/sock",                // unix with user info
		"redis:user:" + secret + "@host",                      // opaque
		"rediss://u:" + secret + "@h:6379?X-Amz-Signature=ab", // iam conflict
	}
	for _, u := range urls {
		for _, vars := range []map[string]string{
			{"OCYPOD_REDIS_URL": u},
			{"OCYPOD_REDIS_URL": u, "OCYPOD_REDIS_IAM_USER": "u", "OCYPOD_REDIS_CACHE_NAME": "c"},
			{"OCYPOD_REDIS_URL": u, "OCYPOD_REDIS_IAM_USER": "u"},
			{"OCYPOD_REDIS_URL": u, "OCYPOD_KEY_NAMESPACE": "{}"},
		} {
			c, err := FromEnv(env(vars))
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Errorf("FromEnv(url %q) error shows the secret: %v", u, err)
			}
			c.Redis.URL = u // show it even when validation refused it
			var buf strings.Builder
			slog.New(slog.NewTextHandler(&buf, nil)).Info("config", "config", c, "redis", c.Redis)
			for _, out := range []string{c.String(), c.GoString(), c.Redis.String(), c.Redis.GoString(),
				c.Redis.RedactedURL(), buf.String(), fmtAll(c)} {
				if strings.Contains(out, secret) {
					t.Errorf("output for url %q shows the secret: %s", u, out)
				}
			}
		}
		// File errors too, including the TOML parser's.
		for _, file := range []string{
			"[redis]\nurl = \"" + u + "\"",
			"[redis]\nurl = " + u,
			"[redis]\nurl = \"" + u,
			"[redis]\nurl = \"" + u + "\"\niam_user = \"x\"",
		} {
			if _, err := Parse([]byte(file), nil); err != nil && strings.Contains(err.Error(), secret) {
				t.Errorf("Parse(%q) error shows the secret: %v", file, err)
			}
		}
	}
	c := Config{Redis: Redis{URL: "rediss://default:" + secret + "@h.example.com:6379/2"}}
	if got, want := c.Redis.RedactedURL(), "rediss://REDACTED@h.example.com:6379/2"; got != want {
		t.Errorf("RedactedURL() = %q, want %q", got, want)
	}
	c.Redis.URL = "unix:///var/run/redis.sock"
	if got := c.Redis.RedactedURL(); got != c.Redis.URL {
		t.Errorf("RedactedURL(unix) = %q, want it unchanged", got)
	}
}

// TestEnvDefaultsMatch: every variable's documented default (shown by
// --help and the README) is the configuration's real default.
func TestEnvDefaultsMatch(t *testing.T) {
	t.Parallel()
	env := map[string]string{}
	for _, v := range EnvVars() {
		if v.Default != "" {
			env[v.Name] = v.Default
		}
	}
	got, err := FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatalf("FromEnv(the documented defaults) = %v", err)
	}
	if want, _ := FromEnv(func(string) (string, bool) { return "", false }); !reflect.DeepEqual(got, want) {
		t.Errorf("the documented defaults give\n%+v\nthe real defaults are\n%+v", got, want)
	}
}
