package config

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

func TestDefault(t *testing.T) {
	t.Parallel()
	c, err := Load("", env(nil))
	if err != nil {
		t.Fatalf("Load(no file, no env) error = %v", err)
	}
	want := Config{
		Server: Server{
			Host: "127.0.0.1", Port: 8023, MaxBodySize: 256 << 10,
			TimeoutCheckInterval: 30 * time.Second, RetryCheckInterval: 60 * time.Second,
			ExpiryCheckInterval: 5 * time.Minute, ShutdownTimeout: 30 * time.Second, LogLevel: slog.LevelInfo,
			WorkerExpiry: time.Hour, StatsHistory: 30, MaxLongPolls: 1000,
		},
		Redis: Redis{Timeout: 2 * time.Second, EmbeddedMaxMemory: 512 << 20, Partitions: 1, Scripts: "auto"},
		Sweep: Sweep{Budget: 50 * time.Second, Batch: 100},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Load defaults = %v, want %v", c, want)
	}
	if !reflect.DeepEqual(Default(), want) {
		t.Errorf("Default() = %v, want %v", Default(), want)
	}
	if c, err := FromEnv(nil); err != nil || !reflect.DeepEqual(c, want) {
		t.Errorf("FromEnv(nil) = %v, %v; want defaults", c, err)
	}
	if c, err := Parse(nil, nil); err != nil || !reflect.DeepEqual(c, want) {
		t.Errorf("Parse(empty) = %v, %v; want defaults", c, err)
	}
}

const fullFile = `
# every field Ocypod knows, plus ours
[server]
host = "0.0.0.0"
port = 9000
threads = 4
max_body_size = "1MiB"
timeout_check_interval = "1500ms"
retry_check_interval = "2m"
expiry_check_interval = "1h 30m"
shutdown_timeout = "10s 500ms"
next_job_delay = "250ms"
log_level = "DEBUG"
allowed_hosts = ["Queue.Example", "queue.example:8023", "10.0.0.7", "[0:0::1]:9000", "::2"]
worker_expiry = "30m"
stats_history = 14
max_long_polls = 50
strict_input = true
unknown_key = "ignored"

[redis]
url = "rediss://cache.example.com:6379"
key_namespace = "ns-1.x"
cluster = true
pool_size = 7
timeout = "750ms"
iam_user = "app-user"
cache_name = "My-Cache"
serverless = true
embedded_max_memory = "64MiB"
partitions = 4
scripts = "functions"

[sweep]
budget = "20s"
batch = 500

[queue.default]

[queue.fast]
timeout = "1m"
heartbeat_timeout = "10s"
expires_after = "1day"
retries = 3
retry_delays = ["1s", "1500ms", "1m"]

[queue."name.1.low"]
expires_after = "0s"

[unknown_section]
anything = [1, 2]
`

func TestParseEveryField(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte(fullFile), nil)
	if err != nil {
		t.Fatalf("Parse error = %v", err)
	}
	want := Config{
		Server: Server{
			Host: "0.0.0.0", Port: 9000, Threads: 4, MaxBodySize: 1 << 20,
			TimeoutCheckInterval: 1500 * time.Millisecond, RetryCheckInterval: 2 * time.Minute,
			ExpiryCheckInterval: 90 * time.Minute, ShutdownTimeout: 10 * time.Second,
			NextJobDelay: 250 * time.Millisecond, LogLevel: slog.LevelDebug,
			AllowedHosts: []string{"queue.example", "queue.example:8023", "10.0.0.7", "[::1]:9000", "[::2]"},
			WorkerExpiry: 30 * time.Minute, StatsHistory: 14, MaxLongPolls: 50, StrictInput: true,
		},
		Redis: Redis{
			URL: "rediss://cache.example.com:6379", KeyNamespace: "ns-1.x", ClusterMode: true, PoolSize: 7,
			Timeout: 750 * time.Millisecond, IAMUser: "app-user", CacheName: "My-Cache", Serverless: true,
			EmbeddedMaxMemory: 64 << 20, Partitions: 4, Scripts: "functions",
		},
		Sweep: Sweep{Budget: 20 * time.Second, Batch: 500},
		Queues: map[string]ocypod.QueueSettings{
			"default": ocypod.DefaultQueueSettings(),
			"fast": {
				Timeout: ocypod.Seconds(60), HeartbeatTimeout: ocypod.Seconds(10), ExpiresAfter: ocypod.Seconds(86400),
				Retries: 3, RetryDelays: []ocypod.Duration{ocypod.Seconds(1), ocypod.Seconds(1), ocypod.Seconds(60)},
			},
			"name.1.low": {Timeout: ocypod.Seconds(300)},
		},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Parse(full) =\n%#v\nwant\n%#v", c, want)
		for _, n := range c.QueueNames() {
			if !reflect.DeepEqual(c.Queues[n], want.Queues[n]) {
				t.Errorf("queue %s = %+v, want %+v", n, c.Queues[n], want.Queues[n])
			}
		}
	}
	if got := c.QueueNames(); !reflect.DeepEqual(got, []string{"default", "fast", "name.1.low"}) {
		t.Errorf("QueueNames() = %q", got)
	}
}

func TestParseFields(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		file  string
		check func(Config) bool
	}{
		"max_body_size 0 means default":    {`server.max_body_size = "0B"`, func(c Config) bool { return c.Server.MaxBodySize == 256<<10 }},
		"max_body_size KB is KiB":          {`server.max_body_size = "2KB"`, func(c Config) bool { return c.Server.MaxBodySize == 2048 }},
		"max_body_size kB is 1000":         {`server.max_body_size = "2kB"`, func(c Config) bool { return c.Server.MaxBodySize == 2000 }},
		"shutdown truncated to seconds":    {`server.shutdown_timeout = "1999ms"`, func(c Config) bool { return c.Server.ShutdownTimeout == time.Second }},
		"shutdown 65535s is the maximum":   {`server.shutdown_timeout = "65535s"`, func(c Config) bool { return c.Server.ShutdownTimeout == 65535*time.Second }},
		"shutdown zero allowed":            {`server.shutdown_timeout = "0s"`, func(c Config) bool { return c.Server.ShutdownTimeout == 0 }},
		"check interval keeps nanoseconds": {`server.timeout_check_interval = "1s 1ns"`, func(c Config) bool { return c.Server.TimeoutCheckInterval == time.Second+1 }},
		"port 0":                           {`server.port = 0`, func(c Config) bool { return c.Server.Port == 0 }},
		"port 65535":                       {`server.port = 65535`, func(c Config) bool { return c.Server.Port == 65535 }},
		"log level trace":                  {`server.log_level = "trace"`, func(c Config) bool { return c.Server.LogLevel == LevelTrace }},
		"log level error":                  {`server.log_level = "Error"`, func(c Config) bool { return c.Server.LogLevel == slog.LevelError }},
		"ipv6 host":                        {`server.host = "::1"`, func(c Config) bool { return c.Server.Addr() == "[::1]:8023" }},
		"unix url":                         {`redis.url = "unix:///tmp/r.sock"`, func(c Config) bool { return c.Redis.URL == "unix:///tmp/r.sock" }},
		"db path":                          {`redis.url = "redis://h:1/3"`, func(c Config) bool { return c.Redis.URL == "redis://h:1/3" }},
		"queue retry_delays empty":         {"[queue.q]\nretry_delays = []", func(c Config) bool { return c.Queues["q"].RetryDelays == nil }},
		"queue sub-second truncated":       {"[queue.q]\ntimeout = \"500ms\"", func(c Config) bool { return c.Queues["q"].Timeout.IsZero() }},
		"queue names valid chars":          {"[queue._]\n[queue.-]\n[queue.\".\"]\n[queue.abc-123-ABC]", func(c Config) bool { return len(c.Queues) == 4 }},
		"dotted keys":                      {`queue.q.retries = 2`, func(c Config) bool { return c.Queues["q"].Retries == 2 }},
		"inline table":                     {`server = { port = 1 }`, func(c Config) bool { return c.Server.Port == 1 }},
		"unknown sections ignored":         {"[foo]\nbar=1\n[server.sub]\nx=1", func(c Config) bool { return c.Server.Port == 8023 }},
		"redis.threads (upstream) ignored": {"[redis]\nthreads = 4", func(c Config) bool { return c.Redis.PoolSize == 0 }},
		"interpolated port":                {`server.port = ${PORT=1234}`, func(c Config) bool { return c.Server.Port == 1234 }},
		"next_job_delay sub-second":        {`server.next_job_delay = "10ms"`, func(c Config) bool { return c.Server.NextJobDelay == 10*time.Millisecond }},
		"expiry check interval long units": {`server.expiry_check_interval = "2hours"`, func(c Config) bool { return c.Server.ExpiryCheckInterval == 2*time.Hour }},
		"retry check interval whitespace":  {`server.retry_check_interval = " 1m 5s "`, func(c Config) bool { return c.Server.RetryCheckInterval == 65*time.Second }},
		"sweep batch bounds":               {`sweep.batch = 10000`, func(c Config) bool { return c.Sweep.Batch == 10000 }},
		"queue retries large":              {"[queue.q]\nretries = 9223372036854775807", func(c Config) bool { return c.Queues["q"].Retries == 1<<63-1 }},
		"queue heartbeat and expires": {"[queue.q]\nheartbeat_timeout = \"1m\"\nexpires_after = \"0s\"", func(c Config) bool {
			q := c.Queues["q"]
			return q.HeartbeatTimeout.Secs == 60 && q.ExpiresAfter.IsZero() && q.Timeout.Secs == 300
		}},
		"allowed_hosts empty list":           {`server.allowed_hosts = []`, func(c Config) bool { return c.Server.AllowedHosts == nil }},
		"allowed_hosts port zeros":           {`server.allowed_hosts = ["h:08023"]`, func(c Config) bool { return c.Server.AllowedHosts[0] == "h:8023" }},
		"allowed_hosts underscore":           {`server.allowed_hosts = ["my_host.local"]`, func(c Config) bool { return c.Server.AllowedHosts[0] == "my_host.local" }},
		"push allowed_hosts":                 {"[push]\nallowed_hosts = [\"Hooks.Example\", \"10.0.0.8:8443\"]", func(c Config) bool { return len(c.Push.AllowedHosts) == 2 && c.Push.AllowedHosts[0] == "hooks.example" }},
		"embedded_max_memory 1MiB":           {`redis.embedded_max_memory = "1MiB"`, func(c Config) bool { return c.Redis.EmbeddedMaxMemory == 1<<20 }},
		"embedded_max_memory decimal":        {`redis.embedded_max_memory = "2 GB"`, func(c Config) bool { return c.Redis.EmbeddedMaxMemory == 2e9 }},
		"empty namespace and long namespace": {`redis.key_namespace = "` + strings.Repeat("a", 64) + `"`, func(c Config) bool { return len(c.Redis.KeyNamespace) == 64 }},
	}
	for name, tt := range tests {
		c, err := Parse([]byte(tt.file), nil)
		if err != nil {
			t.Errorf("%s: Parse(%q) error = %v", name, tt.file, err)
			continue
		}
		if !tt.check(c) {
			t.Errorf("%s: Parse(%q) = %v: check failed", name, tt.file, c)
		}
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := map[string]struct{ file, want string }{
		"toml syntax":              {"[server\nport = 1", "toml: line 2"},
		"duplicate key":            {"[server]\nport = 1\nport = 2", "toml: line 3"},
		"bare max_body_size":       {`server.max_body_size = "1024"`, "Unable to parse size '1024'"},
		"integer max_body_size":    {`server.max_body_size = 1024`, "Unable to parse size '1024'"},
		"bad unit":                 {`server.max_body_size = "1 kilobyte"`, "Unable to parse size '1 kilobyte'"},
		"float max_body_size":      {`server.max_body_size = 1.5`, "server.max_body_size: expected a size string"},
		"bad log level":            {`server.log_level = "verbose"`, "Invalid log level: verbose"},
		"log level not string":     {`server.log_level = 3`, "server.log_level: expected a string, got an integer"},
		"shutdown too long":        {`server.shutdown_timeout = "65536s"`, "Maximum shutdown_timeout is 65535 seconds"},
		"shutdown way too long":    {`server.shutdown_timeout = "1000years"`, "Maximum shutdown_timeout is 65535 seconds"},
		"zero timeout interval":    {`server.timeout_check_interval = "0s"`, "server.timeout_check_interval (OCYPOD_TIMEOUT_CHECK_INTERVAL) must be greater than zero"},
		"zero retry interval":      {`server.retry_check_interval = "0ms"`, "server.retry_check_interval (OCYPOD_RETRY_CHECK_INTERVAL) must be greater than zero"},
		"zero expiry interval":     {`server.expiry_check_interval = "0s"`, "server.expiry_check_interval (OCYPOD_EXPIRY_CHECK_INTERVAL) must be greater than zero"},
		"bare duration":            {`server.timeout_check_interval = "30"`, "server.timeout_check_interval: invalid duration \"30\": time unit needed"},
		"integer duration":         {`server.timeout_check_interval = 30`, "server.timeout_check_interval: expected a duration string such as \"30s\", got an integer"},
		"negative duration":        {`server.next_job_delay = "-1s"`, "expected number at 0"},
		"empty duration":           {`server.next_job_delay = ""`, "value was empty"},
		"port out of range":        {`server.port = 65536`, "server.port: 65536 is out of range 0..65535"},
		"negative port":            {`server.port = -1`, "server.port: -1 is out of range"},
		"port string":              {`server.port = "8023"`, "server.port: expected an integer, got a string"},
		"host not string":          {`server.host = 1`, "server.host: expected a string, got an integer"},
		"threads negative":         {`server.threads = -1`, "server.threads: -1 is out of range"},
		"server not a table":       {`server = 1`, "server: expected a table, got an integer"},
		"queue not a table":        {`queue = "x"`, "queue: expected a table, got a string"},
		"queue entry not a table":  {"[queue]\nq = 1", "queue.q: expected a [queue.q] table"},
		"invalid queue name":       {`[queue."a b"]`, "Invalid queue name, valid characters: a-zA-Z0-9_.-"},
		"empty queue name":         {`[queue.""]`, "Invalid queue name"},
		"unicode queue name":       {`[queue."nâme"]`, "Invalid queue name"},
		"queue duration":           {"[queue.q]\ntimeout = \"5\"", "queue.q.timeout: invalid duration \"5\": time unit needed"},
		"queue duration type":      {"[queue.q]\nexpires_after = 5", "queue.q.expires_after: expected a duration string"},
		"queue negative retries":   {"[queue.q]\nretries = -1", "queue.q.retries: -1 is out of range"},
		"queue retries string":     {"[queue.q]\nretries = \"3\"", "queue.q.retries: expected an integer, got a string"},
		"queue retry_delays type":  {"[queue.q]\nretry_delays = \"1s\"", "queue.q.retry_delays: expected a list of duration strings"},
		"queue retry_delays item":  {"[queue.q]\nretry_delays = [\"1s\", 2]", "queue.q.retry_delays[1]: expected a duration string"},
		"queue retry_delays parse": {"[queue.q]\nretry_delays = [\"1x\"]", "queue.q.retry_delays[0]: invalid duration \"1x\": unknown time unit"},
		"bad namespace":            {`redis.key_namespace = "a{b}"`, "redis.key_namespace (OCYPOD_KEY_NAMESPACE) \"a{b}\" is invalid"},
		"long namespace":           {`redis.key_namespace = "` + strings.Repeat("a", 65) + `"`, "is invalid: at most 64 characters"},
		"bad scheme":               {`redis.url = "http://h"`, "scheme must be redis, rediss or unix"},
		"no host":                  {`redis.url = "redis://"`, "has no host"},
		"unix no path":             {`redis.url = "unix://"`, "has no socket path"},
		"url path":                 {`redis.url = "redis://h/x"`, "the path must be a database number"},
		"not a url":                {`redis.url = "::"`, "redis.url (OCYPOD_REDIS_URL) is not a valid URL"},
		"opaque url":               {`redis.url = "redis:h"`, "is not a valid URL"},
		"redis bool":               {`redis.cluster = "yes"`, "redis.cluster: expected true or false, got a string"},
		"redis pool negative":      {`redis.pool_size = -1`, "redis.pool_size: -1 is out of range"},
		"redis timeout zero":       {`redis.timeout = "0s"`, "redis.timeout (OCYPOD_REDIS_TIMEOUT) must be greater than zero"},
		"sweep batch zero":         {`sweep.batch = 0`, "sweep.batch: 0 is out of range 1..10000"},
		"sweep budget zero":        {`sweep.budget = "0s"`, "sweep.budget (OCYPOD_SWEEP_BUDGET) must be greater than zero"},
		"iam without tls":          {"[redis]\nurl = \"redis://h:6379\"\niam_user = \"u\"\ncache_name = \"c\"", "needs a TLS URL rediss://"},
		"iam without url":          {"[redis]\niam_user = \"u\"\ncache_name = \"c\"", "needs a TLS URL rediss://"},
		"iam without cache name":   {"[redis]\nurl = \"rediss://h:6379\"\niam_user = \"u\"", "needs redis.cache_name (OCYPOD_REDIS_CACHE_NAME)"},
		"iam with password":        {"[redis]\nurl = \"rediss://u:pw@h:6379\"\niam_user = \"u\"\ncache_name = \"c\"", "conflicts with the password"},
		"iam user with space":      {"[redis]\nurl = \"rediss://h:6379\"\niam_user = \"a b\"\ncache_name = \"c\"", "cannot contain spaces"},
		"allowed_hosts not a list": {`server.allowed_hosts = "localhost"`, "server.allowed_hosts: expected a list of host names"},
		"allowed_hosts item type":  {`server.allowed_hosts = ["a", 1]`, "server.allowed_hosts: entry 2: expected a string, got an integer"},
		"allowed_hosts url":        {`server.allowed_hosts = ["http://a"]`, `server.allowed_hosts: entry 1 "http://a": a host name, not a URL`},
		"allowed_hosts path":       {`server.allowed_hosts = ["a/b"]`, `server.allowed_hosts: entry 1 "a/b": a host name with an optional port only`},
		"allowed_hosts wildcard":   {`server.allowed_hosts = ["*.example"]`, `server.allowed_hosts: entry 1 "*.example"`},
		"allowed_hosts empty":      {`server.allowed_hosts = ["a", ""]`, `server.allowed_hosts: entry 2 "": empty host`},
		"push allowed_hosts url":   {"[push]\nallowed_hosts = [\"https://a\"]", `push.allowed_hosts: entry 1 "https://a": a host name, not a URL`},
		"allowed_hosts port":       {`server.allowed_hosts = ["a:0"]`, "server.allowed_hosts: entry 1 \"a:0\": the port must be a number in 1..65535"},
		"allowed_hosts big port":   {`server.allowed_hosts = ["a:65536"]`, "the port must be a number in 1..65535"},
		"allowed_hosts empty port": {`server.allowed_hosts = ["a:"]`, "empty port after ':'"},
		"allowed_hosts bad v6":     {`server.allowed_hosts = ["[::g]"]`, "not an IPv6 address between '[' and ']'"},
		"allowed_hosts v4 in []":   {`server.allowed_hosts = ["[1.2.3.4]"]`, "not an IPv6 address between '[' and ']'"},
		"allowed_hosts v6 junk":    {`server.allowed_hosts = ["[::1]x"]`, "only ':port' may follow ']'"},
		"allowed_hosts bad v4":     {`server.allowed_hosts = ["1.2.3.256"]`, "not a valid IPv4 address"},
		"allowed_hosts dots":       {`server.allowed_hosts = ["a..b"]`, "empty label in host name"},
		"allowed_hosts trailing":   {`server.allowed_hosts = ["localhost."]`, "empty label in host name"},
		"allowed_hosts unicode":    {`server.allowed_hosts = ["bücher.example"]`, "invalid character"},
		"allowed_hosts long label": {`server.allowed_hosts = ["` + strings.Repeat("a", 64) + `"]`, "label longer than 63 bytes"},
		"embedded_max_memory bare": {`redis.embedded_max_memory = "1024"`, "redis.embedded_max_memory: Unable to parse size '1024'"},
		"embedded_max_memory int":  {`redis.embedded_max_memory = 1024`, "redis.embedded_max_memory: expected a size string such as \"512MiB\", got an integer"},
		"embedded_max_memory tiny": {`redis.embedded_max_memory = "100KiB"`, "redis.embedded_max_memory (OCYPOD_EMBEDDED_MAX_MEMORY) must be at least 1MiB, got 100KiB"},
		"embedded_max_memory zero": {`redis.embedded_max_memory = "0B"`, "must be at least 1MiB, got 0B"},
		"missing variables":        {"port = ${B}\nhost = ${A}${B}", "the following variables were not set: A, B"},
	}
	for name, tt := range tests {
		_, err := Parse([]byte(tt.file), nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Parse(%q) error = %v, want it to contain %q", name, tt.file, err, tt.want)
		}
	}
}

func TestLoadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.toml", "[server]\nport = ${PORT=9000}\n[queue.q]\nretries = 1\n")
	c, err := Load(good, env(map[string]string{"PORT": "9100"}))
	if err != nil || c.Server.Port != 9100 || c.Queues["q"].Retries != 1 {
		t.Fatalf("Load(good) = %v, %v; want port 9100 and queue q", c, err)
	}

	missing := filepath.Join(dir, "nope.toml")
	_, err = Load(missing, nil)
	if want := "Failed to parse config file " + missing + ": no such file or directory"; err == nil || err.Error() != want {
		t.Errorf("Load(missing) error = %v, want %q", err, want)
	}
	var fe *FileError
	if !errors.As(err, &fe) || fe.Path != missing {
		t.Errorf("Load(missing) error = %#v, want *FileError for the path", err)
	}

	for name, tt := range map[string]struct{ text, want string }{
		"syntax":        {"[[", "Failed to parse config file %s: toml: line 1"},
		"interpolation": {"a = ${B}${A}", "Failed to parse config file %s: could not interpolate environment variables into config, the following variables were not set: A, B"},
		"size":          {"[server]\nmax_body_size = 1024", "Failed to parse config file %s: Unable to parse size '1024'"},
		"queue name":    {"[queue.\"a/b\"]", "Failed to parse config file %s: [queue.\"a/b\"]: Invalid queue name, valid characters: a-zA-Z0-9_.-"},
	} {
		p := write(name+".toml", tt.text)
		_, err := Load(p, nil)
		if want := strings.Replace(tt.want, "%s", p, 1); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: Load error = %v, want prefix %q", name, err, want)
		}
	}
	// Ocypod reports shutdown_timeout outside the "Failed to parse" wrapper.
	p := write("shutdown.toml", "server.shutdown_timeout = \"19h\"")
	if _, err := Load(p, nil); err == nil || err.Error() != "Maximum shutdown_timeout is 65535 seconds" {
		t.Errorf("Load(shutdown 19h) error = %v", err)
	}
}
