package config

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// decodeTOML applies Ocypod's file format (plus our [redis] and [sweep]
// extensions) to c. Unknown sections and keys are ignored, as upstream does.
// The document is decoded into generic maps and read key by key, so every
// error names its key and none echoes a Redis URL.
func decodeTOML(text string, c *Config) error {
	var doc map[string]any
	if _, err := toml.Decode(text, &doc); err != nil {
		// Error() is the short message (ErrorWithPosition would quote the
		// offending line, which may hold a password).
		return errors.New(ocypod.RedactSecrets(err.Error()))
	}
	if t, ok, err := section(doc, "server"); err != nil {
		return err
	} else if ok {
		if err := decodeServer(t, &c.Server); err != nil {
			return err
		}
	}
	if t, ok, err := section(doc, "redis"); err != nil {
		return err
	} else if ok {
		if err := decodeRedis(t, &c.Redis); err != nil {
			return err
		}
	}
	if t, ok, err := section(doc, "sweep"); err != nil {
		return err
	} else if ok {
		if err := decodeSweep(t, &c.Sweep); err != nil {
			return err
		}
	}
	if t, ok, err := section(doc, "push"); err != nil {
		return err
	} else if ok {
		if err := decodePush(t, &c.Push); err != nil {
			return err
		}
	}
	if t, ok, err := section(doc, "queue"); err != nil {
		return err
	} else if ok {
		c.Queues = make(map[string]ocypod.QueueSettings, len(t.m))
		for name := range t.m {
			q, _, err := section(t.m, name)
			if err != nil {
				return fmt.Errorf("queue.%s: expected a [queue.%s] table", name, name)
			}
			if !ocypod.ValidQueueName(name) {
				return fmt.Errorf("[queue.%q]: Invalid queue name, valid characters: a-zA-Z0-9_.-", name)
			}
			q.name = "queue." + name
			s, err := decodeQueue(q)
			if err != nil {
				return err
			}
			c.Queues[name] = s
		}
	}
	return nil
}

// table is one TOML table and its dotted name, for error messages.
type table struct {
	name string
	m    map[string]any
}

func section(doc map[string]any, name string) (table, bool, error) {
	v, ok := doc[name]
	if !ok {
		return table{}, false, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return table{}, false, fmt.Errorf("%s: expected a table, got %s", name, tomlType(v))
	}
	return table{name: name, m: m}, true, nil
}

func (t table) errorf(key, format string, args ...any) error {
	return fmt.Errorf("%s.%s: "+format, append([]any{t.name, key}, args...)...)
}

func (t table) str(key string, dst *string) error {
	v, ok := t.m[key]
	if !ok {
		return nil
	}
	s, ok := v.(string)
	if !ok {
		return t.errorf(key, "expected a string, got %s", tomlType(v))
	}
	*dst = s
	return nil
}

func (t table) boolean(key string, dst *bool) error {
	v, ok := t.m[key]
	if !ok {
		return nil
	}
	b, ok := v.(bool)
	if !ok {
		return t.errorf(key, "expected true or false, got %s", tomlType(v))
	}
	*dst = b
	return nil
}

// integer reads a TOML integer in [lo, hi].
func (t table) integer(key string, lo, hi int64, dst *int64) error {
	v, ok := t.m[key]
	if !ok {
		return nil
	}
	n, ok := v.(int64)
	if !ok {
		return t.errorf(key, "expected an integer, got %s", tomlType(v))
	}
	if n < lo || n > hi {
		return t.errorf(key, "%d is out of range %d..%d", n, lo, hi)
	}
	*dst = n
	return nil
}

// duration reads a duration string with parse (parseDuration or
// parseShutdown).
func (t table) duration(key string, parse func(string) (time.Duration, error), dst *time.Duration) error {
	var s string
	if _, ok := t.m[key]; !ok {
		return nil
	}
	if err := t.str(key, &s); err != nil {
		return t.errorf(key, "expected a duration string such as \"30s\", got %s", tomlType(t.m[key]))
	}
	d, err := parse(s)
	if err != nil {
		var ue upstreamError
		if errors.As(err, &ue) {
			return err
		}
		return t.errorf(key, "%v", err)
	}
	*dst = d
	return nil
}

// queueDuration reads a queue setting: whole seconds, as Ocypod stores them.
func queueDuration(name string, v any) (ocypod.Duration, error) {
	s, ok := v.(string)
	if !ok {
		return ocypod.Duration{}, fmt.Errorf("%s: expected a duration string such as \"5m\", got %s", name, tomlType(v))
	}
	d, err := ocypod.ParseDuration(s)
	if err != nil {
		return ocypod.Duration{}, fmt.Errorf("%s: invalid duration %q: %w", name, s, err)
	}
	return d.Truncate(), nil
}

func decodeServer(t table, s *Server) error {
	if err := t.str("host", &s.Host); err != nil {
		return err
	}
	port := int64(s.Port)
	if err := t.integer("port", 0, math.MaxUint16, &port); err != nil {
		return err
	}
	s.Port = uint16(port)
	threads := int64(s.Threads)
	if err := t.integer("threads", 0, math.MaxInt32, &threads); err != nil {
		return err
	}
	s.Threads = int(threads)
	if v, ok := t.m["max_body_size"]; ok {
		var text string
		switch v := v.(type) {
		case string:
			text = v
		case int64:
			text = fmt.Sprint(v) // a TOML integer is a bare number: refused below
		default:
			return t.errorf("max_body_size", "expected a size string such as \"256KiB\", got %s", tomlType(v))
		}
		n, err := ParseSize(text)
		if err != nil {
			return err
		}
		if n == 0 {
			n = DefaultMaxBodySize
		}
		s.MaxBodySize = n
	}
	for _, d := range []struct {
		key string
		dst *time.Duration
	}{
		{"timeout_check_interval", &s.TimeoutCheckInterval},
		{"retry_check_interval", &s.RetryCheckInterval},
		{"expiry_check_interval", &s.ExpiryCheckInterval},
		{"next_job_delay", &s.NextJobDelay},
		{"worker_expiry", &s.WorkerExpiry},
	} {
		if err := t.duration(d.key, parseDuration, d.dst); err != nil {
			return err
		}
	}
	if err := t.duration("shutdown_timeout", parseShutdown, &s.ShutdownTimeout); err != nil {
		return err
	}
	days := int64(s.StatsHistory)
	if err := t.integer("stats_history", 1, 3650, &days); err != nil {
		return err
	}
	s.StatsHistory = int(days)
	if err := t.boolean("strict_input", &s.StrictInput); err != nil {
		return err
	}
	polls := int64(s.MaxLongPolls)
	if err := t.integer("max_long_polls", 1, MaxLongPollsLimit, &polls); err != nil {
		return err
	}
	s.MaxLongPolls = int(polls)
	if err := t.hosts("allowed_hosts", &s.AllowedHosts); err != nil {
		return err
	}
	if v, ok := t.m["log_level"]; ok {
		str, ok := v.(string)
		if !ok {
			return t.errorf("log_level", "expected a string, got %s", tomlType(v))
		}
		l, err := ParseLevel(str)
		if err != nil {
			return err
		}
		s.LogLevel = l
	}
	return nil
}

func decodeRedis(t table, r *Redis) error {
	for _, f := range []struct {
		key string
		dst *string
	}{{"url", &r.URL}, {"key_namespace", &r.KeyNamespace}, {"iam_user", &r.IAMUser}, {"cache_name", &r.CacheName},
		{"scripts", &r.Scripts}} {
		if err := t.str(f.key, f.dst); err != nil {
			return err
		}
	}
	if err := t.boolean("cluster", &r.ClusterMode); err != nil {
		return err
	}
	if err := t.boolean("serverless", &r.Serverless); err != nil {
		return err
	}
	pool := int64(r.PoolSize)
	if err := t.integer("pool_size", 0, math.MaxInt32, &pool); err != nil {
		return err
	}
	r.PoolSize = int(pool)
	parts := int64(r.Partitions)
	if err := t.integer("partitions", 1, MaxPartitions, &parts); err != nil {
		return err
	}
	r.Partitions = int(parts)
	if v, ok := t.m["embedded_max_memory"]; ok {
		text, ok := v.(string)
		if !ok {
			return t.errorf("embedded_max_memory", "expected a size string such as \"512MiB\", got %s", tomlType(v))
		}
		n, err := ParseSize(text)
		if err != nil {
			return t.errorf("embedded_max_memory", "%v", err)
		}
		r.EmbeddedMaxMemory = n
	}
	return t.duration("timeout", parseDuration, &r.Timeout)
}

// hosts reads a list of host[:port] entries (allowed_hosts).
func (t table) hosts(key string, dst *[]string) error {
	v, ok := t.m[key]
	if !ok {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		return t.errorf(key, "expected a list of host names such as [\"localhost\", \"queue.example:8023\"], got %s", tomlType(v))
	}
	entries := make([]string, len(list))
	for i, item := range list {
		if entries[i], ok = item.(string); !ok {
			return t.errorf(key, "entry %d: expected a string, got %s", i+1, tomlType(item))
		}
	}
	hosts, err := parseAllowedHosts(entries)
	if err != nil {
		return t.errorf(key, "%v", err)
	}
	*dst = hosts
	return nil
}

func decodePush(t table, p *Push) error { return t.hosts("allowed_hosts", &p.AllowedHosts) }

func decodeSweep(t table, s *Sweep) error {
	if err := t.duration("budget", parseDuration, &s.Budget); err != nil {
		return err
	}
	batch := int64(s.Batch)
	if err := t.integer("batch", 1, MaxSweepBatch, &batch); err != nil {
		return err
	}
	s.Batch = int(batch)
	return nil
}

// decodeQueue reads a [queue.<name>] section: the PUT /queue/{name} fields,
// each defaulting to Ocypod's built-in value.
func decodeQueue(t table) (ocypod.QueueSettings, error) {
	s := ocypod.DefaultQueueSettings()
	for _, d := range []struct {
		key string
		dst *ocypod.Duration
	}{{"timeout", &s.Timeout}, {"heartbeat_timeout", &s.HeartbeatTimeout}, {"expires_after", &s.ExpiresAfter}} {
		if v, ok := t.m[d.key]; ok {
			var err error
			if *d.dst, err = queueDuration(t.name+"."+d.key, v); err != nil {
				return s, err
			}
		}
	}
	retries := int64(0)
	if err := t.integer("retries", 0, math.MaxInt64, &retries); err != nil {
		return s, err
	}
	s.Retries = uint64(retries)
	if v, ok := t.m["retry_delays"]; ok {
		list, ok := v.([]any)
		if !ok {
			return s, t.errorf("retry_delays", "expected a list of duration strings, got %s", tomlType(v))
		}
		for i, item := range list {
			d, err := queueDuration(fmt.Sprintf("%s.retry_delays[%d]", t.name, i), item)
			if err != nil {
				return s, err
			}
			s.RetryDelays = append(s.RetryDelays, d)
		}
	}
	return s, nil
}

// tomlType names a decoded TOML value's type for error messages without
// showing the value itself.
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	}
	return "a date/time"
}
