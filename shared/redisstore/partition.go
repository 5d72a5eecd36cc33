package redisstore

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
)

// MaxPartitions bounds Options.Partitions.
const MaxPartitions = 1024

// clusterSlots is the number of Redis Cluster hash slots.
const clusterSlots = 16384

// layout places a namespace's data in partitions: partition p's keys all
// start with the hash tag of tags[p], so each partition is one cluster slot,
// and the slots of the P partitions are spread evenly over the slot range
// (so over the shards of any cluster whose slots are split evenly).
type layout struct {
	ns   string
	P    int
	tags []string // hash tag content of each partition
	pre  []string // "{tag}:" of each partition
	// spread[i] is how far from a queue's home its shard i lies: the
	// partitions 0..P-1 in bit-reversed order, so that the first K shards
	// of a queue lie far apart on the slot range, so on different nodes.
	spread []int
	// spreadAt is spread inverted: the shard index of each offset.
	spreadAt []int
}

var layouts sync.Map // "ns/P" -> *layout; the tag search is paid once per process

// layoutFor returns the layout of namespace ns over P partitions.
func layoutFor(ns string, P int) *layout {
	k := ns + "/" + strconv.Itoa(P)
	if l, ok := layouts.Load(k); ok {
		return l.(*layout)
	}
	l := &layout{ns: ns, P: P, tags: partitionTags(ns, P)}
	l.spread = spreadOrder(P)
	l.spreadAt = make([]int, P)
	for i, off := range l.spread {
		l.spreadAt[off] = i
	}
	l.pre = make([]string, P)
	for p, t := range l.tags {
		l.pre[p] = "{" + t + "}:"
	}
	v, _ := layouts.LoadOrStore(k, l)
	return v.(*layout)
}

// partitionTags returns the hash tag of each of P partitions of namespace
// ns. With one partition it is ns itself (the single-slot layout). With
// more, partition p's tag is "<ns>:<p>:<n>" with the smallest n whose slot
// lies within a quarter of a partition's width of the middle of the p-th of
// P equal slices of the slot range: every node of a cluster whose slots are
// split evenly serves its share of the partitions, whatever the cluster's
// size, as long as slices are not split across nodes.
func partitionTags(ns string, P int) []string {
	if P <= 1 {
		return []string{ns}
	}
	tags := make([]string, P)
	width := float64(clusterSlots) / float64(P)
	reach := max(int(width/4), 0)
	for p := range tags {
		prefix := ns + ":" + strconv.Itoa(p) + ":"
		base := crc16(0, prefix)
		mid := int(width*float64(p) + width/2)
		for n := 0; ; n++ {
			suffix := strconv.FormatInt(int64(n), 36)
			slot := int(crc16(base, suffix) % clusterSlots)
			if slot >= mid-reach && slot <= mid+reach {
				tags[p] = prefix + suffix
				break
			}
		}
	}
	return tags
}

// crc16 continues the CRC16-CCITT (XMODEM) of Redis Cluster's key hashing
// from crc over s.
func crc16(crc uint16, s string) uint16 {
	for i := 0; i < len(s); i++ {
		crc = crc<<8 ^ crcTable[byte(crc>>8)^s[i]]
	}
	return crc
}

var crcTable = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// Slot is the Redis Cluster hash slot of key (hash tag honoured).
func Slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(0, key) % clusterSlots)
}

// partitionOf is the partition holding job id.
func (l *layout) partitionOf(id uint64) int { return int(id % uint64(l.P)) }

// home is the partition of queue name (the first of its shards).
func (l *layout) home(name string) int {
	if l.P == 1 {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return int(h.Sum32() % uint32(l.P))
}

// shard is the partition of shard i of a queue whose home is home.
func (l *layout) shard(home, i int) int { return (home + l.spread[i]) % l.P }

// shardIndex is the shard index, in a queue whose home is home, of
// partition p: shard(home, shardIndex(home, p)) == p.
func (l *layout) shardIndex(home, p int) int { return l.spreadAt[(p-home+l.P)%l.P] }

// spreadOrder returns 0..P-1 in bit-reversed order (the van der Corput
// sequence, scaled): every prefix of it is spread nearly evenly over
// 0..P-1. With P = 12: 0 8 4 2 10 6 1 9 5 3 11 7, so on 3 nodes of 4
// consecutive partitions each, shards 0, 1 and 2 are on 3 nodes.
func spreadOrder(P int) []int {
	bits := 0
	for 1<<bits < P {
		bits++
	}
	out := make([]int, 0, P)
	for i := range 1 << bits {
		r := 0
		for b := range bits {
			if i&(1<<b) != 0 {
				r |= 1 << (bits - 1 - b)
			}
		}
		if r < P {
			out = append(out, r)
		}
	}
	return out
}

// key is the key called name (j, idx, run...: records.lua lists them) of
// partition p.
func (l *layout) key(p int, name string) string { return l.pre[p] + name }

func (l *layout) String() string { return fmt.Sprintf("%s over %d partitions", l.ns, l.P) }
