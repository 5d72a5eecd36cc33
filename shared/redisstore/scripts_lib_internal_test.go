package redisstore

import (
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// TestLibFilesListed checks that libFiles names every helper file, once.
func TestLibFilesListed(t *testing.T) {
	t.Parallel()
	files, err := fs.Glob(scriptFiles, "scripts/lib/*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("embedded helpers: %v, %v", files, err)
	}
	var names []string
	for _, f := range files {
		names = append(names, path.Base(f))
	}
	listed := slices.Clone(libFiles)
	slices.Sort(listed)
	if !slices.Equal(names, slices.Compact(listed)) || len(listed) != len(libFiles) {
		t.Errorf("scripts/lib holds %v; libFiles lists %v", names, libFiles)
	}
}

// redisGlobals are the names a script may use without defining them: Lua
// 5.1's standard library as Redis offers it, and Redis's own.
var redisGlobals = map[string]bool{
	"redis": true, "cjson": true, "cmsgpack": true, "bit": true, "struct": true, "KEYS": true, "ARGV": true,
	"assert": true, "error": true, "ipairs": true, "next": true, "pairs": true, "pcall": true, "select": true,
	"tonumber": true, "tostring": true, "type": true, "unpack": true, "xpcall": true, "rawget": true, "rawset": true,
	"rawequal": true, "setmetatable": true, "getmetatable": true, "math": true, "string": true, "table": true,
}

// globalsOf compiles Lua source and returns the global names it reads or
// writes: in a script, each is a helper it calls without defining it
// before (a local defined later is a global where it is used), which Redis
// refuses only when that line runs.
func globalsOf(t *testing.T, name, src string) []string {
	t.Helper()
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	proto, err := lua.Compile(chunk, name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out []string
	var walk func(p *lua.FunctionProto)
	walk = func(p *lua.FunctionProto) {
		for _, inst := range p.Code {
			if op := int(inst >> 26); op == lua.OP_GETGLOBAL || op == lua.OP_SETGLOBAL {
				g := p.Constants[inst&0x3ffff].String()
				if !slices.Contains(out, g) {
					out = append(out, g)
				}
			}
		}
		for _, c := range p.FunctionPrototypes {
			walk(c)
		}
	}
	walk(proto)
	return out
}

// TestScriptsDefineWhatTheyUse checks that every script, as built (and the
// Functions library), defines each helper it uses before using it: the
// helper files are in a workable order and the tree-shaking keeps what a
// script needs.
func TestScriptsDefineWhatTheyUse(t *testing.T) {
	t.Parallel()
	_, lib, _ := strings.Cut(library(), "\n") // without its "#!lua" header
	srcs := map[string]string{"library": lib, "helpers": "local K, KW, A\n" + libSource()}
	for name, sc := range loaded {
		srcs[name] = sc.get().src
	}
	for name, src := range srcs {
		for _, g := range globalsOf(t, name, src) {
			if !redisGlobals[g] {
				t.Errorf("%s uses %s, which it does not define before", name, g)
			}
		}
	}
	// The check can fail: a helper used before its definition is a global.
	if g := globalsOf(t, "probe", "local function a() return b() end\nlocal function b() end\n"); !slices.Equal(g, []string{"b"}) {
		t.Errorf("probe: globals %v, want [b]", g)
	}
}

// TestLayoutMatchesScripts checks the names of layout.go against the
// scripts: every key is one some script declares (the per-minute counts
// only in KW, fold_stats.lua's), the status codes are records.lua's CODE,
// and the slot and statistics codes are those the helpers write.
func TestLayoutMatchesScripts(t *testing.T) {
	t.Parallel()
	declared := map[string]bool{}
	for _, sc := range loaded {
		for _, k := range sc.get().keys {
			declared[k] = true
		}
	}
	seen := map[string]bool{}
	for _, k := range partitionKeys {
		if seen[k] {
			t.Errorf("partitionKeys lists %q twice", k)
		}
		seen[k] = true
		if !declared[k] && k != keyMinutes {
			t.Errorf("no script declares K.%s", k)
		}
	}
	for k := range declared {
		if !seen[k] {
			t.Errorf("a script declares K.%s, which partitionKeys does not list", k)
		}
	}

	// CODE: status = 'code', on the lines of its table.
	records := readScript("lib/records.lua")
	start := strings.Index(records, "local CODE = {")
	end := strings.Index(records[start:], "}") + start
	codes := map[string]ocypod.Status{}
	for _, m := range regexp.MustCompile(`(\w+) = '(\w+)'`).FindAllStringSubmatch(records[start:end], -1) {
		codes[m[2]] = ocypod.Status(m[1])
	}
	if !maps.Equal(codes, codeStatus) {
		t.Errorf("records.lua's CODE is %v; codeStatus %v", codes, codeStatus)
	}

	// The slots of a job key: "<slot> <queue> <key>".
	all := libSource()
	for _, name := range sortedLoaded() {
		all += readScript(name)
	}
	slots := map[string]bool{}
	for _, m := range regexp.MustCompile(`'(\w+) ' \.\. j\.queue \.\. ' ' \.\. j\.key|key_holder\('(\w+)'`).FindAllStringSubmatch(all, -1) {
		slots[m[1]+m[2]] = true
	}
	if want := map[string]bool{slotPending: true, slotRunning: true}; !maps.Equal(slots, want) {
		t.Errorf("the scripts use the key slots %v; layout.go names %v", slots, want)
	}

	// Statistics: stats.lua's PENDING, where each pending code counts, is
	// pendingCodes; the histograms' fields are "<q> w<b>" (stat_wait) and
	// "<q> r<b>" (fold_stats.lua); every code is one some script counts.
	stats := readScript("lib/stats.lua")
	start = strings.Index(stats, "local PENDING = {")
	end = strings.Index(stats[start:], "\n}") + start
	type counts = struct{ total, day, minute string }
	pending := map[string]counts{}
	for _, m := range regexp.MustCompile(`(?m)^  (\w) = \{([^}]*)\}`).FindAllStringSubmatch(stats[start:end], -1) {
		var c counts
		for _, kv := range regexp.MustCompile(`(\w+) = '(\w+)'`).FindAllStringSubmatch(m[2], -1) {
			switch kv[1] {
			case "tot":
				c.total = kv[2]
			case "day":
				c.day = kv[2]
			case "minute":
				c.minute = kv[2]
			default:
				t.Errorf("PENDING's %s: unknown figure %s", m[1], kv[1])
			}
		}
		pending[m[1]] = c
	}
	want := map[string]counts{}
	for code, c := range pendingCodes {
		want[code] = counts{c.total, c.day, c.minute}
	}
	if !maps.Equal(pending, want) {
		t.Errorf("stats.lua's PENDING is %v; pendingCodes %v", pending, want)
	}
	used := map[string]bool{"c": strings.Contains(all, "stat_created("), "y": strings.Contains(all, "stat_retried(")}
	for _, m := range regexp.MustCompile(`stat_end\([^,]+, ([^,]+),`).FindAllStringSubmatch(all, -1) {
		for _, c := range regexp.MustCompile(`'(\w)'`).FindAllStringSubmatch(m[1], -1) {
			used[c[1]] = true
		}
	}
	for code := range pendingCodes {
		if !used[code] {
			t.Errorf("no script counts the pending code %s", code)
		}
	}
	if !strings.Contains(stats, "q .. ' "+statWait+"' .. bucket_since(") || !strings.Contains(readScript("fold_stats.lua"), "q .. ' "+statRun+"' .. b") {
		t.Errorf("the histograms' fields are not %q and %q", statWait, statRun)
	}
}
