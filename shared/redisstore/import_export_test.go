package redisstore

// ImportKey is the key of the namespace's import progress.
func (l Layout) ImportKey() string { return "{" + l.l.ns + "}:" + importKeyName }
