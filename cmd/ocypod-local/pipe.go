package main

import (
	"net"
	"sync"
)

// asyncConn is the client end of the embedded miniredis's in-memory pipe,
// with writes that do not wait for miniredis to read them. A pipe has no
// buffer: a pipeline larger than the client's write buffer would block
// writing while miniredis blocks writing its first reply, which nobody
// reads yet. Writes are queued and sent in order by a goroutine; the first
// error of a send is returned by the next Write.
type asyncConn struct {
	net.Conn
	mu     sync.Mutex
	cond   *sync.Cond
	queue  [][]byte
	err    error
	closed bool
}

func newAsyncConn(c net.Conn) *asyncConn {
	a := &asyncConn{Conn: c}
	a.cond = sync.NewCond(&a.mu)
	go a.send()
	return a
}

func (a *asyncConn) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return 0, a.err
	}
	if a.closed {
		return 0, net.ErrClosed
	}
	a.queue = append(a.queue, append([]byte(nil), p...))
	a.cond.Signal()
	return len(p), nil
}

// send writes the queued chunks to the pipe until the connection closes.
func (a *asyncConn) send() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for {
		for len(a.queue) == 0 && !a.closed {
			a.cond.Wait()
		}
		if len(a.queue) == 0 {
			return
		}
		chunk := a.queue[0]
		a.queue = a.queue[1:]
		a.mu.Unlock()
		_, err := a.Conn.Write(chunk)
		a.mu.Lock()
		if err != nil {
			a.err, a.queue = err, nil
			return
		}
	}
}

func (a *asyncConn) Close() error {
	a.mu.Lock()
	a.closed = true
	a.cond.Signal()
	a.mu.Unlock()
	return a.Conn.Close()
}
