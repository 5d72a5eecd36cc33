package redisstore

import (
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// scriptFiles holds every Lua script, and in scripts/lib the helpers they
// share: those a script uses are put in front of it.
//
//go:embed scripts/*.lua scripts/lib/*.lua
var scriptFiles embed.FS

// libFiles are the helper files of scripts/lib, one concern each, in the
// order their definitions are put together: a helper may use only those
// defined above it, in its own file or an earlier one.
var libFiles = []string{
	"base.lua",        // numbers, JSON, lex-member encodings
	"records.lua",     // the job record codec, times and states read from it
	"queues.lua",      // queue settings, due times, wake-ups
	"generations.lua", // drop records of deleted queues
	"indexes.lua",     // the index entries of a job: attach, detach
	"stats.lua",       // counters and daily statistics
	"outbox.lua",      // effects
	"runnable.lua",    // queued, scheduled or waiting; retry times
	"job_keys.lua",    // a key's pending and running slots
	"deps.lua",        // dependencies recorded and released
	"transitions.lua", // finish, fail, requeue, remove, promote
	"deps_apply.lua",  // dependency outcomes delivered
	"reply.lua",       // replies and refusals
	"sweeps.lua",      // sweep steps, promotion of due jobs
	"limits.lua",      // concurrency and rate limits, shares
	"takes.lua",       // takes and the workers' registry
}

// The scripts, one per operation; each file's opening comment documents
// its argument and reply. Each declares the Go types of its argument (one
// per shape of the argument it takes), which Store.argv checks on every
// call and TestScriptArgsMatchLua against the fields the Lua reads.
var (
	scriptCreateJob   = loadScript("create_job.lua", createJobArgs{}, createOnceArgs{})
	scriptTake        = loadScript("take.lua", takeArgs{})
	scriptUpdateJob   = loadScript("update_job.lua", updateJobArgs{})
	scriptHeartbeat   = loadScript("heartbeat.lua", heartbeatArgs{})
	scriptSetOutput   = loadScript("set_output.lua", setOutputArgs{})
	scriptDeleteJob   = loadScript("delete_job.lua", deleteJobArgs{})
	scriptGetJob      = loadScript("get_job.lua", getJobArgs{})
	scriptRetryJob    = loadScript("retry_job.lua", retryJobArgs{})
	scriptPutQueue    = loadScript("put_queue.lua", putQueueArgs{}, replicaArgs{})
	scriptPatchQueue  = loadScript("patch_queue.lua", patchQueueArgs{}, shareMembersArgs{})
	scriptDeleteQueue = loadScript("delete_queue.lua")
	scriptDropQueue   = loadScript("drop_queue.lua", dropQueueArgs{})
	scriptQueueJobs   = loadScript("queue_jobs.lua", queueJobsArgs{})
	scriptInfo        = loadScript("info.lua")
	scriptQueueMetric = loadScript("queue_metrics.lua", queueMetricsArgs{})
	scriptSweep       = loadScript("sweep.lua", sweepArgs{})
	scriptApply       = loadScript("apply.lua", applyArgs{})
	scriptPinEffect   = loadScript("pin_effect.lua", pinEffectArgs{})
	scriptList        = loadScript("list.lua", listArgs{})
	scriptWorkers     = loadScript("workers.lua", workersArgs{}, workerJobsArgs{})
	scriptRetryGroup  = loadScript("retry_group.lua", retryGroupArgs{})
	scriptSchedule    = loadScript("schedule.lua", scheduleArgs{}, schedulePutArgs{}, scheduleFireArgs{})
	scriptUpgrade     = loadScript("upgrade.lua", upgradeArgs{}, upgradeQueueArgs{}, upgradeJobsArgs{})
	scriptUpCounts    = loadScript("upgrade_counters.lua", upCountsArgs{})
	scriptFoldStats   = loadScript("fold_stats.lua", foldStatsArgs{})
	scriptShares      = loadScript("shares.lua", sharesArgs{})
	scriptDepLock     = loadScript("dep_lock.lua", depLockArgs{})
	scriptDepWalk     = loadScript("dep_walk.lua", depWalkArgs{})
	// Callbacks (callbacks.go).
	scriptCallbacks    = loadScript("callbacks.lua", callbacksArgs{})
	scriptCallbackDone = loadScript("callback_done.lua", callbackDoneArgs{})
)

// script is one Lua script, built on first use (building it scans the helpers,
// and a Lambda function only ever runs a few of the scripts).
type script struct {
	name string
	get  func() *built
	// args are the types of the argument the script takes (none: it
	// takes only the common fields).
	args []reflect.Type
}

// built is a script ready to run: its source and the names of the keys it
// takes, in KEYS order; variadic is set when it also takes
// the keys the caller lists after them (KW).
type built struct {
	rs       *redis.Script
	src      string
	keys     []string
	variadic bool
	// fn is the script's name as a Redis Function (see library).
	fn string
}

// loaded records every script, for the tests that each embedded file is
// used and loads on a real server.
var loaded = map[string]*script{}

// loadScript declares the script in scripts/<name>, which takes an
// argument of one of the types of args (struct values). It panics at
// start-up if the file is missing: that is a build error.
func loadScript(name string, args ...any) *script {
	if _, err := fs.Stat(scriptFiles, path.Join("scripts", name)); err != nil {
		panic(fmt.Sprintf("redisstore: embedded script %s: %v", name, err))
	}
	sc := &script{name: name, get: sync.OnceValue(func() *built { return build(name) }), args: argTypes(args)}
	loaded[name] = sc
	return sc
}

// keyRef finds the keys Lua code uses: every K.<name>, and KW.
var keyRef = regexp.MustCompile(`\bK\.([a-z]+)\b|\bKW\b`)

// build composes the script in scripts/<name>: a prelude binding its keys
// and argument, the helpers of scripts/lib it uses, then the script itself. The
// keys are exactly those the code mentions, so a script never touches a key
// it did not declare.
func build(name string) *built {
	body := readScript(name)
	code := libFor(body) + "\n" + body
	b := &built{}
	for _, m := range keyRef.FindAllStringSubmatch(code, -1) {
		switch {
		case m[0] == "KW":
			b.variadic = true
		case !slices.Contains(b.keys, m[1]):
			b.keys = append(b.keys, m[1])
		}
	}
	slices.Sort(b.keys)
	var pre strings.Builder
	pre.WriteString("local K = {")
	for i, k := range b.keys {
		fmt.Fprintf(&pre, "%s = KEYS[%d], ", k, i+1)
	}
	pre.WriteString("}\n")
	if b.variadic {
		fmt.Fprintf(&pre, "local KW = {}\nfor i = %d, #KEYS do KW[#KW + 1] = KEYS[i] end\n", len(b.keys)+1)
	}
	pre.WriteString("local A = cjson.decode(ARGV[1])\n")
	b.src = pre.String() + code
	b.rs = redis.NewScript(b.src)
	b.fn = libraryName() + "_" + strings.TrimSuffix(name, ".lua")
	return b
}

// opName is the Lua function a script body becomes in the library.
func opName(name string) string { return "op_" + strings.TrimSuffix(name, ".lua") }

// libraryBody is every script as one Redis Functions library, without its
// header and registrations: the helpers once, then each script body as a
// function. Servers that have FUNCTION (Redis 7+, Valkey) load it once and
// then run each call without re-creating the helpers; elsewhere (miniredis)
// the store sends each script with EVALSHA. The code is the same either way:
// only the prelude binding K, KW and A differs.
var libraryBody = sync.OnceValue(func() string {
	var bodies, ops strings.Builder
	for _, name := range sortedLoaded() {
		body := readScript(name)
		bodies.WriteString(body)
		fmt.Fprintf(&ops, "local function %s()\n%send\n", opName(name), body)
	}
	return "local K, KW, A\n" + libFor(bodies.String()) + ops.String()
})

// libraryName is the library's name: "ocyless_" and a hash of its code, so
// two versions of the store on one Redis never call each other's code.
var libraryName = sync.OnceValue(func() string {
	sum := sha1.Sum([]byte(libraryBody()))
	return "ocyless_" + hex.EncodeToString(sum[:6])
})

// library is the whole library as FUNCTION LOAD takes it: header, body and
// one registration per script, binding the keys the script declares with
// one table constructor (the names are constants of the library, not
// looped over on each call).
var library = sync.OnceValue(func() string {
	var reg strings.Builder
	for _, n := range sortedLoaded() {
		b := loaded[n].get()
		fmt.Fprintf(&reg, "redis.register_function('%s', function(keys, args)\n  K = {", b.fn)
		for i, k := range b.keys {
			fmt.Fprintf(&reg, "%s = keys[%d], ", k, i+1)
		}
		reg.WriteString("}\n")
		if b.variadic {
			fmt.Fprintf(&reg, "  KW = {}\n  for i = %d, #keys do KW[#KW + 1] = keys[i] end\n", len(b.keys)+1)
		} else {
			reg.WriteString("  KW = nil\n")
		}
		fmt.Fprintf(&reg, "  A = cjson.decode(args[1])\n  NOTES = {}\n  return %s()\nend)\n", opName(n))
	}
	return "#!lua name=" + libraryName() + "\n" + libraryBody() + reg.String()
})

// sortedLoaded is every script's file name, sorted.
func sortedLoaded() []string {
	names := make([]string, 0, len(loaded))
	for n := range loaded {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// libBlock is one top-level definition of a helper file ("local function f" or
// "local A, B = ..."), with the comment lines above it and the identifiers
// its text mentions.
type libBlock struct {
	names  []string
	text   string
	idents []string
}

// libFor returns the helper blocks that body uses, directly or through
// other blocks, in their original order. Every script runs its whole prelude
// on each call; a script only pays for what it uses.
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

// parsedLib is the helper files split into blocks, in libFiles order, once.
var parsedLib = sync.OnceValue(func() []libBlock {
	var blocks []libBlock
	for _, f := range libFiles {
		blocks = append(blocks, libBlocks(readScript(path.Join("lib", f)))...)
	}
	return blocks
})

// libSource is the helper files put together, whole, in libFiles order.
func libSource() string {
	var b strings.Builder
	for _, f := range libFiles {
		b.WriteString(readScript(path.Join("lib", f)))
	}
	return b.String()
}

// libBlocks splits a helper file at its top-level "local" lines; the
// file's opening comment, up to its first blank line, is dropped. Top-level
// statements that are not definitions (a loop filling a table) belong to
// the block above them.
func libBlocks(src string) []libBlock {
	if strings.HasPrefix(src, "--") {
		if i := strings.Index(src, "\n\n"); i >= 0 {
			src = src[i+2:]
		}
	}
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
