package redisstore

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/redis/go-redis/v9"
)

// scriptFiles holds every Lua script. lib.lua is not a script of its own: it
// is prepended to each of the others (see loadScript).
//
//go:embed scripts/*.lua
var scriptFiles embed.FS

// libName is the shared helper file prepended to every script.
const libName = "lib.lua"

// Result codes: the first element of a script's reply. lib.lua defines the
// same values (TestLuaCodesMatchGo compares them).
const (
	codeOK            = 0
	codeJobNotFound   = 1
	codeQueueNotFound = 2
	codeConflict      = 3
	codeNotRunning    = 4
	codeCorrupt       = 5
)

// The scripts, one per operation; each file's opening comment documents its
// KEYS, ARGV and reply.
var (
	scriptPutQueue     = loadScript("put_queue.lua")
	scriptDeleteQueue  = loadScript("delete_queue.lua")
	scriptQueueSize    = loadScript("queue_size.lua")
	scriptQueueJobIDs  = loadScript("queue_job_ids.lua")
	scriptCreateJob    = loadScript("create_job.lua")
	scriptNextJob      = loadScript("next_job.lua")
	scriptUpdateJob    = loadScript("update_job.lua")
	scriptSetJobOutput = loadScript("set_job_output.lua")
	scriptHeartbeat    = loadScript("heartbeat.lua")
	scriptDeleteJob    = loadScript("delete_job.lua")
	scriptInfo         = loadScript("info.lua")
	scriptSweepTimeout = loadScript("sweep_timeouts.lua")
	scriptSweepRetries = loadScript("sweep_retries.lua")
	scriptSweepExpiry  = loadScript("sweep_expiry.lua")
)

// loaded records the file behind each script, for the test that every
// embedded file is used and loads on a real server.
var loaded = map[string]*redis.Script{}

// loadScript builds the script in scripts/<name> with lib.lua in front of
// it. It panics at start-up if a file is missing: that is a build error.
func loadScript(name string) *redis.Script {
	s := redis.NewScript(scriptSource(name))
	loaded[name] = s
	return s
}

// scriptSource is the full source of the script in scripts/<name>.
func scriptSource(name string) string {
	return readScript(libName) + "\n" + readScript(name)
}

func readScript(name string) string {
	b, err := fs.ReadFile(scriptFiles, path.Join("scripts", name))
	if err != nil {
		panic(fmt.Sprintf("redisstore: embedded script %s: %v", name, err))
	}
	return strings.TrimRight(string(b), "\n") + "\n"
}
