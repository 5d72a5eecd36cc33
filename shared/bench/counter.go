package bench

import (
	"context"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/redis/go-redis/v9"
)

// Counter counts the Redis round trips and commands of a go-redis client.
// Add it with client.AddHook(counter) before the client dials.
//
// Round trips are counted at the socket: every connection the client dials
// is wrapped, and each first read after a write is one round trip. That
// catches everything the client sends, whatever the API: a command, a
// pipeline (one round trip), an EVALSHA answered NOSCRIPT and retried as EVAL
// (two), the HELLO of a new connection (one). Commands are counted by name
// through the process hooks, for the breakdown.
//
// A Counter is safe for concurrent use. Its zero value is ready.
type Counter struct {
	trips atomic.Int64
	dials atomic.Int64

	mu   sync.Mutex
	cmds map[string]int64
}

var _ redis.Hook = (*Counter)(nil)

// Snapshot is a Counter's totals at one moment. Sub gives the difference of
// two snapshots, i.e. what happened between them.
type Snapshot struct {
	RoundTrips int64            // request/response exchanges on the sockets
	Dials      int64            // connections opened
	Commands   map[string]int64 // commands sent, by lower-case name (pipelined ones too)
}

// Snapshot returns the totals so far.
func (c *Counter) Snapshot() Snapshot {
	c.mu.Lock()
	cmds := make(map[string]int64, len(c.cmds))
	for k, v := range c.cmds {
		cmds[k] = v
	}
	c.mu.Unlock()
	return Snapshot{RoundTrips: c.trips.Load(), Dials: c.dials.Load(), Commands: cmds}
}

// Sub returns s minus before: what happened after before was taken.
// Commands whose count did not change are left out.
func (s Snapshot) Sub(before Snapshot) Snapshot {
	d := Snapshot{RoundTrips: s.RoundTrips - before.RoundTrips, Dials: s.Dials - before.Dials, Commands: map[string]int64{}}
	for k, v := range s.Commands {
		if n := v - before.Commands[k]; n != 0 {
			d.Commands[k] = n
		}
	}
	return d
}

// CommandCount is the number of commands in s.
func (s Snapshot) CommandCount() int64 {
	var n int64
	for _, v := range s.Commands {
		n += v
	}
	return n
}

// CommandList is s's commands as "name xN" in name order, e.g.
// "evalsha x3"; "-" when there are none.
func (s Snapshot) CommandList() string {
	names := make([]string, 0, len(s.Commands))
	for k := range s.Commands {
		names = append(names, k)
	}
	if len(names) == 0 {
		return "-"
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = k + " x" + strconv.FormatInt(s.Commands[k], 10)
	}
	return strings.Join(parts, ", ")
}

func (c *Counter) addCmds(cmds []redis.Cmder) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmds == nil {
		c.cmds = map[string]int64{}
	}
	for _, cmd := range cmds {
		c.cmds[strings.ToLower(cmd.Name())]++
	}
}

// DialHook wraps every new connection so that its round trips are counted.
func (c *Counter) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		c.dials.Add(1)
		cc := &countingConn{Conn: conn, c: c}
		if sc, ok := conn.(syscall.Conn); ok {
			// go-redis checks an idle connection's health through
			// syscall.Conn; keep that behaviour.
			return &countingSyscallConn{countingConn: cc, sc: sc}, nil
		}
		return cc, nil
	}
}

// ProcessHook counts each command by name.
func (c *Counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.addCmds([]redis.Cmder{cmd})
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook counts each command of a pipeline (or transaction) by
// name.
func (c *Counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.addCmds(cmds)
		return next(ctx, cmds)
	}
}

// countingConn counts a round trip at the first read after a write.
type countingConn struct {
	net.Conn
	c     *Counter
	wrote atomic.Bool
}

func (cc *countingConn) Write(p []byte) (int, error) {
	cc.wrote.Store(true)
	return cc.Conn.Write(p)
}

func (cc *countingConn) Read(p []byte) (int, error) {
	if cc.wrote.CompareAndSwap(true, false) {
		cc.c.trips.Add(1)
	}
	return cc.Conn.Read(p)
}

// countingSyscallConn is a countingConn whose connection has a file
// descriptor.
type countingSyscallConn struct {
	*countingConn
	sc syscall.Conn
}

// SyscallConn returns the wrapped connection's raw connection.
func (c *countingSyscallConn) SyscallConn() (syscall.RawConn, error) { return c.sc.SyscallConn() }
