package redistest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Options select the kind of server StartServer starts.
type Options struct {
	// Cluster starts a single-node cluster (--cluster-enabled yes, every
	// slot assigned) on a free 127.0.0.1 TCP port; Client returns a cluster
	// client, so scripts whose keys span slots fail with CROSSSLOT.
	// Otherwise the server listens on a unix socket only.
	Cluster bool
	// AppendOnly persists every write (--appendonly yes --appendfsync
	// always), so the data survives Stop and Restart.
	AppendOnly bool
}

// startTimeout bounds how long a server may take to accept commands (and,
// in cluster mode, to report cluster_state:ok).
const startTimeout = 15 * time.Second

// Server is a private redis-server process. Its data directory lives until
// Close.
type Server struct {
	opts Options
	node bool // a node of a Cluster: no slots of its own, plain client
	dir  string
	sock string // plain mode
	port int    // cluster mode
	bus  int    // cluster mode: the cluster bus port

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{} // closed when the process has exited
	client redis.UniversalClient
}

// StartServer starts a redis-server as o describes and waits until it
// accepts commands. It fails when redis-server is not on PATH or does not
// come up in time; the error then carries the end of its log.
func StartServer(o Options) (*Server, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, errors.New("redis-server not found on PATH: install it (Debian/Ubuntu: apt-get install redis-server; CI's .ci/run does this)")
	}
	return startServer(o, false)
}

// startServer starts a server; node selects a member of a Cluster, whose
// slots the Cluster assigns.
func startServer(o Options, node bool) (*Server, error) {
	dir, err := os.MkdirTemp("", "redistest-")
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, node: node, dir: dir, sock: filepath.Join(dir, "redis.sock")}
	for attempt := 0; ; attempt++ {
		if o.Cluster {
			if s.port, s.bus, err = freePorts(); err != nil {
				break
			}
		}
		if err = s.start(); err == nil || !o.Cluster || attempt == 4 {
			break // a cluster server may lose a race for its ports: retry
		}
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// freePorts returns two TCP ports that were free a moment ago.
func freePorts() (int, int, error) {
	var ports [2]int
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, 0, err
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports[0], ports[1], nil
}

func (s *Server) args() []string {
	a := []string{"--dir", s.dir, "--save", "", "--daemonize", "no", "--logfile", ""}
	if s.opts.Cluster {
		a = append(a, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
			"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(s.bus),
			"--cluster-config-file", filepath.Join(s.dir, "nodes.conf"))
		if s.node {
			// The other nodes keep serving their slots while one is down;
			// the node timeout only decides when a silent node is flagged.
			a = append(a, "--cluster-require-full-coverage", "no", "--cluster-node-timeout", "5000")
		}
	} else {
		a = append(a, "--port", "0", "--unixsocket", s.sock, "--unixsocketperm", "700")
	}
	if s.opts.AppendOnly {
		a = append(a, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		a = append(a, "--appendonly", "no")
	}
	return a
}

func (s *Server) logPath() string { return filepath.Join(s.dir, "redis.log") }

// start runs the process and waits until it serves.
func (s *Server) start() error {
	log, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command("redis-server", s.args()...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	if err := s.waitReady(done); err != nil {
		_ = s.Stop()
		return fmt.Errorf("redis-server did not start: %w\n%s", err, s.logTail())
	}
	return nil
}

// waitReady polls the new process until it answers PING (and, in cluster
// mode, until every slot is served).
func (s *Server) waitReady(done <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	rdb := redis.NewClient(&redis.Options{
		Network: s.network(), Addr: s.Addr(), DisableIdentity: true,
		MaintNotificationsConfig: noMaint(), MaxRetries: -1,
		DialTimeout: time.Second, ReadTimeout: time.Second,
	})
	defer rdb.Close()
	slotsAdded := false
	for {
		err := ping(ctx, rdb)
		if err == nil && s.opts.Cluster && !s.node {
			err = s.clusterReady(ctx, rdb, &slotsAdded)
		}
		if err == nil {
			return nil
		}
		select {
		case <-done:
			return errors.New("the process exited")
		case <-ctx.Done():
			return fmt.Errorf("not ready after %v: %w", startTimeout, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// clusterReady assigns every slot to the node once (a restarted node keeps
// them in nodes.conf) and reports whether the cluster state is ok yet.
func (s *Server) clusterReady(ctx context.Context, rdb *redis.Client, slotsAdded *bool) error {
	info, err := rdb.ClusterInfo(ctx).Result()
	if err != nil {
		return err
	}
	if strings.Contains(info, "cluster_state:ok") {
		return nil
	}
	if !*slotsAdded && strings.Contains(info, "cluster_slots_assigned:0") {
		if err := rdb.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err(); err != nil {
			return err
		}
		*slotsAdded = true
	}
	return errors.New("cluster_state is not ok yet")
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.logPath())
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(bytes.TrimSpace(b))
}

func (s *Server) network() string {
	if s.opts.Cluster {
		return "tcp"
	}
	return "unix"
}

// URL is the server's address as a Redis URL: unix:///<dir>/redis.sock, or
// redis://127.0.0.1:<port> in cluster mode.
func (s *Server) URL() string {
	if s.opts.Cluster {
		return "redis://" + s.Addr()
	}
	return "unix://" + s.sock
}

// Addr is the socket path, or host:port in cluster mode.
func (s *Server) Addr() string {
	if s.opts.Cluster {
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
	}
	return s.sock
}

// Client returns the server's client (a cluster client in cluster mode; a
// plain client to this node alone for a node of a Cluster), created on first
// use and closed by Close. It survives Stop and Restart: broken pooled
// connections are replaced.
func (s *Server) Client() redis.UniversalClient {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client == nil {
		if s.node {
			s.client = redis.NewClient(&redis.Options{
				Addr: s.Addr(), DisableIdentity: true, MaintNotificationsConfig: noMaint(), MaxRetries: -1,
			})
		} else if s.opts.Cluster {
			s.client = redis.NewClusterClient(&redis.ClusterOptions{
				Addrs: []string{s.Addr()}, DisableIdentity: true, MaintNotificationsConfig: noMaint(),
			})
		} else {
			s.client = redis.NewClient(&redis.Options{
				Network: "unix", Addr: s.sock, DisableIdentity: true, MaintNotificationsConfig: noMaint(),
			})
		}
	}
	return s.client
}

// Stop kills the process (SIGKILL: no shutdown save) and waits for it to
// exit. The data directory stays, so Restart can bring the data back when
// AppendOnly is set. Stopping a stopped server does nothing.
func (s *Server) Stop() error {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	<-done
	return nil
}

// Pause stops the process with SIGSTOP: it keeps its sockets, and the
// kernel still accepts connections and buffers commands for it, but nothing
// is answered until Resume. That is how a hung or overloaded Redis looks to
// a client.
func (s *Server) Pause() error { return s.signal(syscall.SIGSTOP) }

// Resume continues a paused process (SIGCONT); it then serves the commands
// that were buffered meanwhile, including those of clients that gave up.
func (s *Server) Resume() error { return s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return errors.New("redistest: the server is stopped")
	}
	return s.cmd.Process.Signal(sig)
}

// Restart starts the server again on the same socket or port and data
// directory (after Stop; a running server is stopped first).
func (s *Server) Restart() error {
	if err := s.Stop(); err != nil {
		return err
	}
	return s.start()
}

// Close stops the server, closes its client and removes its data directory.
func (s *Server) Close() error {
	err := s.Stop()
	s.mu.Lock()
	if s.client != nil {
		err = errors.Join(err, s.client.Close())
		s.client = nil
	}
	s.mu.Unlock()
	return errors.Join(err, os.RemoveAll(s.dir))
}
