package redisstore

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"

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

// script is one Lua script, built on first use: building it scans lib.lua,
// and a Lambda function only ever runs one or a few of the scripts, so none
// of that work is paid at init.
type script struct {
	name string
	get  func() *redis.Script
}

// loaded records the file behind each script, for the test that every
// embedded file is used and loads on a real server.
var loaded = map[string]*script{}

// loadScript declares the script in scripts/<name>, with the lib.lua
// helpers it uses in front of it. It panics at start-up if the file is
// missing: that is a build error.
func loadScript(name string) *script {
	if _, err := fs.Stat(scriptFiles, path.Join("scripts", name)); err != nil {
		panic(fmt.Sprintf("redisstore: embedded script %s: %v", name, err))
	}
	sc := &script{name: name, get: sync.OnceValue(func() *redis.Script {
		return redis.NewScript(scriptSource(name))
	})}
	loaded[name] = sc
	return sc
}

// scriptSource is the full source of the script in scripts/<name>: the
// parts of lib.lua it uses, then the script.
func scriptSource(name string) string {
	body := readScript(name)
	return libFor(body) + "\n" + body
}

// libBlock is one top-level definition of lib.lua ("local function f" or
// "local A, B = ..."), with the comment lines above it and the identifiers
// its text mentions.
type libBlock struct {
	names  []string
	text   string
	idents []string
}

// libFor returns the blocks of lib.lua that body uses, directly or through
// other blocks, in their original order. Every script runs its whole prelude
// on each call, and creating some forty unused closures per call measurably
// costs Redis CPU; a script only pays for what it uses.
func libFor(body string) string {
	blocks := parsedLib()
	need := map[string]bool{}
	for _, id := range luaIdents(body) {
		need[id] = true
	}
	// Blocks only refer to earlier blocks, so one backwards pass resolves
	// every dependency.
	keep := make([]bool, len(blocks))
	for i := len(blocks) - 1; i >= 0; i-- {
		for _, n := range blocks[i].names {
			keep[i] = keep[i] || need[n]
		}
		if keep[i] {
			for _, id := range blocks[i].idents {
				need[id] = true
			}
		}
	}
	var b strings.Builder
	for i, blk := range blocks {
		if keep[i] {
			b.WriteString(blk.text)
		}
	}
	return b.String()
}

// parsedLib is lib.lua split into blocks, once.
var parsedLib = sync.OnceValue(func() []libBlock { return libBlocks(readScript(libName)) })

// libBlocks splits lib.lua at its top-level "local" lines; text before the
// first one (the file's header comment) is dropped.
func libBlocks(src string) []libBlock {
	var blocks []libBlock
	var pending strings.Builder // comment lines waiting for their block
	for _, line := range strings.SplitAfter(src, "\n") {
		switch {
		case strings.HasPrefix(line, "local function "):
			name := strings.TrimPrefix(line, "local function ")
			name = name[:strings.IndexAny(name+"(", " (")]
			blocks = append(blocks, libBlock{names: []string{name}, text: pending.String() + line})
			pending.Reset()
		case strings.HasPrefix(line, "local "):
			lhs, _, _ := strings.Cut(strings.TrimPrefix(line, "local "), "=")
			var names []string
			for _, n := range strings.Split(lhs, ",") {
				names = append(names, strings.TrimSpace(n))
			}
			blocks = append(blocks, libBlock{names: names, text: pending.String() + line})
			pending.Reset()
		case strings.HasPrefix(line, "--") || strings.TrimSpace(line) == "":
			pending.WriteString(line)
		case len(blocks) > 0:
			blocks[len(blocks)-1].text += pending.String() + line
			pending.Reset()
		}
	}
	for i := range blocks {
		blocks[i].idents = luaIdents(blocks[i].text)
	}
	return blocks
}

// luaIdents returns the identifier-like words of Lua text (comments and
// strings included, which can only add helpers, never miss one).
func luaIdents(s string) []string {
	var ids []string
	start := -1
	for i := 0; i <= len(s); i++ {
		c := byte(' ')
		if i < len(s) {
			c = s[i]
		}
		word := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || start >= 0 && c >= '0' && c <= '9'
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			ids = append(ids, s[start:i])
			start = -1
		}
	}
	return ids
}

func readScript(name string) string {
	b, err := fs.ReadFile(scriptFiles, path.Join("scripts", name))
	if err != nil {
		panic(fmt.Sprintf("redisstore: embedded script %s: %v", name, err))
	}
	return strings.TrimRight(string(b), "\n") + "\n"
}

// ScriptBody returns the embedded text of scripts/<name> (e.g.
// "create_job.lua") and ScriptSource the exact source the store runs for
// it; LibFor returns the lib.lua helpers that a Lua body uses. They exist
// for tools that must run the store's own code, such as the benchmarks'
// bulk seeding; they panic on an unknown name.
func ScriptBody(name string) string { return readScript(name) }

// ScriptSource: see ScriptBody.
func ScriptSource(name string) string { return scriptSource(name) }

// LibFor: see ScriptBody.
func LibFor(body string) string { return libFor(body) }
