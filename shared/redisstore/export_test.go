package redisstore

// Layout exposes a namespace's key names to the external tests, so they
// never spell a key themselves.
type Layout struct{ l *layout }

// LayoutOf returns the layout of namespace ns over P partitions.
func LayoutOf(ns string, P int) Layout { return Layout{layoutFor(ns, P)} }

// Key is the key called name (j, idx, run, ...) of partition p.
func (l Layout) Key(p int, name string) string { return l.l.key(p, name) }

// Prefix is the "{tag}:" of partition p.
func (l Layout) Prefix(p int) string { return l.l.pre[p] }

// Tag is the hash tag content of partition p.
func (l Layout) Tag(p int) string { return l.l.tags[p] }

// Home is the home partition of a queue.
func (l Layout) Home(queue string) int { return l.l.home(queue) }

// PartitionOf is the partition of a job id.
func (l Layout) PartitionOf(id uint64) int { return l.l.partitionOf(id) }

// ScriptIDs maps each script file to the SHA1 its EVALSHA uses and the
// function name its FCALL uses.
func ScriptIDs() map[string][2]string {
	m := make(map[string][2]string, len(loaded))
	for name, s := range loaded {
		b := s.get()
		m[name] = [2]string{b.rs.Hash(), b.fn}
	}
	return m
}

// SetCrashAfterCall makes s behave as a process that dies right after each
// script call: the effects it recorded are left in the outbox.
func SetCrashAfterCall(s *Store, on bool) { s.crashAfterCall = on }

// SetUpgradeBatch makes s's upgrade convert n version-1 jobs per batch.
func SetUpgradeBatch(s *Store, n int) { s.upgradeBatch = n }
