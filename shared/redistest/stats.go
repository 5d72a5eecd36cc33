package redistest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// NodeStats is what one redis-server reports of the work it did: per
// command, from INFO commandstats, and its CPU time, from INFO cpu. Both
// count since the process started (CONFIG RESETSTAT clears the commands
// only), so compare two snapshots with Sub.
type NodeStats struct {
	Addr     string
	Commands map[string]CommandStats // by lower-case name, e.g. "evalsha"
	// CPUSys and CPUUser are the server's system and user CPU seconds.
	CPUSys, CPUUser float64
}

// CommandStats are one command's counters.
type CommandStats struct {
	Calls, Usec, Rejected, Failed int64
}

// Calls is the number of commands the node executed.
func (s NodeStats) Calls() int64 {
	var n int64
	for _, c := range s.Commands {
		n += c.Calls
	}
	return n
}

// Usec is the time the node spent executing commands, in microseconds.
func (s NodeStats) Usec() int64 {
	var n int64
	for _, c := range s.Commands {
		n += c.Usec
	}
	return n
}

// Sub returns the work done between snapshot prev and s.
func (s NodeStats) Sub(prev NodeStats) NodeStats {
	d := NodeStats{Addr: s.Addr, Commands: map[string]CommandStats{},
		CPUSys: s.CPUSys - prev.CPUSys, CPUUser: s.CPUUser - prev.CPUUser}
	for name, c := range s.Commands {
		p := prev.Commands[name]
		if c != p {
			d.Commands[name] = CommandStats{Calls: c.Calls - p.Calls, Usec: c.Usec - p.Usec,
				Rejected: c.Rejected - p.Rejected, Failed: c.Failed - p.Failed}
		}
	}
	return d
}

// Stats reads the server's INFO commandstats and cpu. For a single-node
// cluster server the one node answers; for a Cluster, see Cluster.Stats.
// The INFO command itself shows up in the next snapshot.
func (s *Server) Stats(ctx context.Context) (NodeStats, error) {
	text, err := s.Client().Info(ctx, "commandstats", "cpu").Result()
	if err != nil {
		return NodeStats{}, err
	}
	st, err := parseStats(text)
	st.Addr = s.Addr()
	return st, err
}

// parseStats reads the lines "cmdstat_<name>:calls=N,usec=N,...",
// "used_cpu_sys:F" and "used_cpu_user:F" of an INFO reply.
func parseStats(text string) (NodeStats, error) {
	st := NodeStats{Commands: map[string]CommandStats{}}
	for line := range strings.Lines(text) {
		key, val, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		var err error
		switch {
		case strings.HasPrefix(key, "cmdstat_"):
			var c CommandStats
			for field := range strings.SplitSeq(val, ",") {
				k, v, _ := strings.Cut(field, "=")
				var dst *int64
				switch k {
				case "calls":
					dst = &c.Calls
				case "usec":
					dst = &c.Usec
				case "rejected_calls":
					dst = &c.Rejected
				case "failed_calls":
					dst = &c.Failed
				default:
					continue
				}
				if *dst, err = strconv.ParseInt(v, 10, 64); err != nil {
					return st, fmt.Errorf("redistest: INFO %s: %w", key, err)
				}
			}
			st.Commands[strings.TrimPrefix(key, "cmdstat_")] = c
		case key == "used_cpu_sys":
			st.CPUSys, err = strconv.ParseFloat(val, 64)
		case key == "used_cpu_user":
			st.CPUUser, err = strconv.ParseFloat(val, 64)
		}
		if err != nil {
			return st, fmt.Errorf("redistest: INFO %s: %w", key, err)
		}
	}
	return st, nil
}
