package redisstore

// Keys exposes the key builder to the external tests, so they never spell a
// key name themselves.
type Keys = keys

// KeysFor returns the key builder of namespace ns.
func KeysFor(ns string) Keys { return newKeys(ns) }

// ScriptHashes maps each script file to the SHA1 its EVALSHA uses.
func ScriptHashes() map[string]string {
	m := make(map[string]string, len(loaded))
	for name, s := range loaded {
		m[name] = s.get().Hash()
	}
	return m
}
