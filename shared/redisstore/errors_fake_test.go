package redisstore

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeRedis is a tiny RESP server for replies a real redis-server cannot be
// made to give cheaply (LOADING, TRYAGAIN, a managed service's own texts).
// It refuses HELLO as a pre-6 server does (so clients fall back to RESP2)
// and answers every other command with reply, a raw RESP line such as
// "-LOADING Redis is loading the dataset in memory". An empty reply closes
// the connection once the command is read (an EOF for the client). With
// cluster set it answers CLUSTER SLOTS as the one node of a cluster.
type fakeRedis struct {
	ln      net.Listener
	reply   string
	cluster bool

	mu       sync.Mutex
	commands []string // the names of the commands received, in order
	wg       sync.WaitGroup
}

func startFake(t *testing.T, reply string) *fakeRedis {
	t.Helper()
	return startFakeNode(t, reply, false)
}

func startFakeNode(t *testing.T, reply string, cluster bool) *fakeRedis {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeRedis{ln: ln, reply: reply, cluster: cluster}
	f.wg.Go(f.serve)
	t.Cleanup(func() { _ = ln.Close(); f.wg.Wait() })
	return f
}

func (f *fakeRedis) addr() string { return f.ln.Addr().String() }

// received returns the names of the commands received so far.
func (f *fakeRedis) received() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.commands...)
}

func (f *fakeRedis) serve() {
	for {
		conn, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.wg.Go(func() { f.handle(conn) })
	}
}

func (f *fakeRedis) handle(conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	for {
		args, err := readCommand(r)
		if err != nil {
			return
		}
		name := strings.ToUpper(args[0])
		f.mu.Lock()
		f.commands = append(f.commands, name)
		f.mu.Unlock()
		switch {
		case name == "HELLO":
			_, err = io.WriteString(conn, "-ERR unknown command 'HELLO'\r\n")
		case f.cluster && name == "CLUSTER" && len(args) > 1 && strings.EqualFold(args[1], "SLOTS"):
			host, port, _ := net.SplitHostPort(f.addr())
			_, err = fmt.Fprintf(conn, "*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n$%d\r\n%s\r\n:%s\r\n", len(host), host, port)
		case f.reply == "":
			return
		default:
			_, err = io.WriteString(conn, f.reply+"\r\n")
		}
		if err != nil {
			return
		}
	}
}

// readCommand reads one RESP array of bulk strings.
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := readLine(r)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(line, "*") {
		return nil, fmt.Errorf("not an array: %q", line)
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 1 {
		return nil, fmt.Errorf("bad array header %q", line)
	}
	args := make([]string, n)
	for i := range args {
		line, err := readLine(r)
		if err != nil {
			return nil, err
		}
		size, err := strconv.Atoi(strings.TrimPrefix(line, "$"))
		if err != nil || !strings.HasPrefix(line, "$") {
			return nil, fmt.Errorf("bad bulk header %q", line)
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		args[i] = string(b[:size])
	}
	return args, nil
}

func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(line, "\r\n") {
		return "", errors.New("line without CRLF")
	}
	return strings.TrimSuffix(line, "\r\n"), nil
}
