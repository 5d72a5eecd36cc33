package redistest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// SlotCount is the number of hash slots of a Redis Cluster.
const SlotCount = 16384

// ClusterOptions select the cluster StartCluster starts.
type ClusterOptions struct {
	// Primaries is the number of nodes, each a primary without replicas
	// serving an even share of the slots; 0 means 3.
	Primaries int
	// AppendOnly persists every node's writes, so a restarted node has its
	// data back (see Options.AppendOnly).
	AppendOnly bool
}

// Cluster is a Redis Cluster of private redis-server processes on free
// 127.0.0.1 ports. Node i serves the slots SlotRange(i) returns, and with
// cluster-require-full-coverage off the other nodes keep serving theirs
// while one is stopped.
type Cluster struct {
	nodes  []*Server
	ranges [][2]int // the first and last slot of each node

	mu     sync.Mutex
	client *redis.ClusterClient
}

// StartCluster starts o.Primaries nodes at once, gives node i the i-th of
// as many even slot ranges, joins them, and returns when every node reports
// cluster_state:ok and the same slot map. It fails when redis-server is
// missing or the cluster does not form in time; then nothing is left
// running.
func StartCluster(o ClusterOptions) (*Cluster, error) {
	n := o.Primaries
	if n == 0 {
		n = 3
	}
	if n < 1 || n > SlotCount {
		return nil, fmt.Errorf("redistest: %d primaries", n)
	}
	c := &Cluster{nodes: make([]*Server, n), ranges: make([][2]int, n)}
	for i := range n {
		c.ranges[i] = [2]int{i * SlotCount / n, (i+1)*SlotCount/n - 1}
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { c.nodes[i], errs[i] = startServer(Options{Cluster: true, AppendOnly: o.AppendOnly}, true) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	if err := c.form(); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

// form assigns the slots, sets distinct config epochs (as redis-cli does,
// so no epoch collision needs resolving), introduces every pair of nodes
// and waits until the cluster agrees.
func (c *Cluster) form() error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	for i, node := range c.nodes {
		rdb := node.Client()
		r := c.ranges[i]
		if err := rdb.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", r[0], r[1]).Err(); err != nil {
			return fmt.Errorf("node %d: CLUSTER ADDSLOTSRANGE: %w", i, err)
		}
		if err := rdb.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err(); err != nil {
			return fmt.Errorf("node %d: CLUSTER SET-CONFIG-EPOCH: %w", i, err)
		}
	}
	// Every node meets every other one: each pair's handshake then carries
	// both slot ranges directly instead of waiting for gossip.
	for i, node := range c.nodes {
		for _, other := range c.nodes[i+1:] {
			if err := node.Client().Do(ctx, "CLUSTER", "MEET", "127.0.0.1", other.port, other.bus).Err(); err != nil {
				return fmt.Errorf("node %d: CLUSTER MEET: %w", i, err)
			}
		}
	}
	return c.waitAgreed(ctx)
}

// waitAgreed polls every running node until each reports cluster_state:ok,
// knows every node, and maps every slot range to its node.
func (c *Cluster) waitAgreed(ctx context.Context) error {
	for {
		err := c.agreed(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: cluster not ready after %v: %w", startTimeout, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (c *Cluster) agreed(ctx context.Context) error {
	want := map[[2]int]string{}
	for i, r := range c.ranges {
		want[r] = c.nodes[i].Addr()
	}
	for i, node := range c.nodes {
		rdb := node.Client()
		info, err := rdb.ClusterInfo(ctx).Result()
		if err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
		for _, line := range []string{"cluster_state:ok", "cluster_known_nodes:" + strconv.Itoa(len(c.nodes)), "cluster_slots_ok:16384"} {
			if !strings.Contains(info, line) {
				return fmt.Errorf("node %d: CLUSTER INFO lacks %s", i, line)
			}
		}
		slots, err := rdb.ClusterSlots(ctx).Result()
		if err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
		got := map[[2]int]string{}
		for _, s := range slots {
			if len(s.Nodes) > 0 {
				got[[2]int{int(s.Start), int(s.End)}] = s.Nodes[0].Addr
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("node %d: slot map %v, want %v", i, got, want)
		}
	}
	return nil
}

// Len is the number of nodes.
func (c *Cluster) Len() int { return len(c.nodes) }

// Node returns node i (0 <= i < Len). Its Client talks to that node alone
// (no redirects), for CLUSTER and INFO commands or to see a MOVED reply.
func (c *Cluster) Node(i int) *Server { return c.nodes[i] }

// Addrs are the nodes' host:port addresses, in node order.
func (c *Cluster) Addrs() []string {
	a := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		a[i] = n.Addr()
	}
	return a
}

// URL is a redis:// URL of node 0, a seed for a cluster client (as an
// ElastiCache configuration endpoint is).
func (c *Cluster) URL() string { return c.nodes[0].URL() }

// SlotRange returns the first and last slot node i serves.
func (c *Cluster) SlotRange(i int) (first, last int) { return c.ranges[i][0], c.ranges[i][1] }

// NodeForSlot returns the index of the node serving slot.
func (c *Cluster) NodeForSlot(slot int) int {
	for i, r := range c.ranges {
		if slot >= r[0] && slot <= r[1] {
			return i
		}
	}
	panic(fmt.Sprintf("redistest: slot %d out of range", slot))
}

// NodeForKey returns the index of the node serving key's slot.
func (c *Cluster) NodeForKey(key string) int { return c.NodeForSlot(Slot(key)) }

// Client returns a cluster client seeded with every node, created on first
// use and closed by Close.
func (c *Cluster) Client() *redis.ClusterClient {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.client == nil {
		c.client = redis.NewClusterClient(&redis.ClusterOptions{
			Addrs: c.Addrs(), DisableIdentity: true, MaintNotificationsConfig: noMaint(),
		})
	}
	return c.client
}

// Stats returns every node's statistics, in node order (see Server.Stats).
// A stopped node fails the call.
func (c *Cluster) Stats(ctx context.Context) ([]NodeStats, error) {
	out := make([]NodeStats, len(c.nodes))
	for i, n := range c.nodes {
		st, err := n.Stats(ctx)
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", i, err)
		}
		out[i] = st
	}
	return out, nil
}

// StopNode kills node i (see Server.Stop). The others keep serving their
// slots; commands for node i's slots fail until RestartNode.
func (c *Cluster) StopNode(i int) error { return c.nodes[i].Stop() }

// RestartNode starts node i again on its port with its cluster
// configuration (its slots and peers), and returns once the whole cluster
// agrees again. A restarted primary refuses commands for its first 2
// seconds (Redis's rejoin delay), so this takes that long at least. Its
// data is back only with AppendOnly.
func (c *Cluster) RestartNode(i int) error {
	if err := c.nodes[i].Restart(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	return c.waitAgreed(ctx)
}

// Close stops every node, closes the clients and removes the data.
func (c *Cluster) Close() error {
	var err error
	c.mu.Lock()
	if c.client != nil {
		err = c.client.Close()
		c.client = nil
	}
	c.mu.Unlock()
	for _, n := range c.nodes {
		if n != nil {
			err = errors.Join(err, n.Close())
		}
	}
	return err
}
