package redisstore

import (
	"io/fs"
	"maps"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
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

// luaOnlyArgs are fields a script reads that no Go caller sends, each with
// why: the Lua keeps a check that is always nil. (The scripts are not
// changed here; delete the read and then the entry.)
var luaOnlyArgs = map[string][]string{
	// The tag filter: the tag's own index is the source of a listing by
	// tag, so the store never sends it.
	"list.lua": {"tag"},
}

// TestScriptArgsMatchLua checks, for every script, that the fields its
// Lua (with the helpers it uses) reads from its argument, A.<name>, are
// exactly the common fields Store.argv writes and the json tags of the
// argument types the script declares (loadScript): a misspelt tag, a
// field the Lua reads that Go never sends, and one Go sends that no Lua
// reads all fail. Fields the Lua assigns (A.qs, A.woken, ...) are its own
// scratch state, not arguments.
func TestScriptArgsMatchLua(t *testing.T) {
	t.Parallel()
	for _, name := range sortedLoaded() {
		for _, msg := range argMismatches(t, name, usedLua(t, name), loaded[name].args) {
			t.Errorf("%s: %s", name, msg)
		}
	}
	// The check can fail: a misspelt tag, and a field nothing reads.
	type probeArgs struct {
		Limt   int    `json:"limt"`
		Unused string `json:"unused,omitempty"`
	}
	got := argMismatches(t, "probe.lua", "local A = {}\nreturn A.limit + A.ms", []reflect.Type{reflect.TypeFor[probeArgs]()})
	want := []string{
		`reads A.limit, which no argument type has (a json tag misspelt, or a field to add)`,
		`argument field "limt" is never read as A.limt`,
		`argument field "unused" is never read as A.unused`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("probe: %q, want %q", got, want)
	}
}

// argMismatches compares what the Lua source src reads from A with the
// common fields and the json tags of types.
func argMismatches(t *testing.T, name, src string, types []reflect.Type) []string {
	t.Helper()
	reads, writes, problems := luaArgFields(t, name, src)
	tags := map[string]bool{}
	for _, typ := range types {
		problems = append(problems, jsonTags(typ, tags)...)
	}
	for tag := range tags {
		if slices.Contains(commonArgs, tag) {
			problems = append(problems, "argument field "+tag+" is one Store.argv writes for every call")
		}
	}
	luaOnly := luaOnlyArgs[name]
	for _, f := range slices.Sorted(maps.Keys(reads)) {
		switch {
		case writes[f] || slices.Contains(commonArgs, f):
		case slices.Contains(luaOnly, f):
			if tags[f] {
				problems = append(problems, "luaOnlyArgs lists "+f+", which an argument type has")
			}
		case !tags[f]:
			problems = append(problems, "reads A."+f+", which no argument type has (a json tag misspelt, or a field to add)")
		}
	}
	for _, f := range luaOnly {
		if !reads[f] {
			problems = append(problems, "luaOnlyArgs lists "+f+", which the Lua no longer reads")
		}
	}
	for _, f := range slices.Sorted(maps.Keys(tags)) {
		if !reads[f] {
			problems = append(problems, "argument field \""+f+"\" is never read as A."+f)
		} else if writes[f] {
			problems = append(problems, "argument field \""+f+"\" is also the script's scratch state (it assigns A."+f+")")
		}
	}
	return problems
}

// usedLua is script name's code as it runs: the helper definitions it
// uses, directly or through others, and its body. Unlike build's
// selection (libFor, which keeps a helper a comment names, to be safe),
// only the identifiers of the code count, so a helper kept for a word of
// a comment does not add the fields it reads.
func usedLua(t *testing.T, name string) string {
	t.Helper()
	body := readScript(name)
	blocks := parsedLib()
	need := map[string]bool{}
	for _, id := range luaCodeIdents(t, name, body) {
		need[id] = true
	}
	keep := make([]bool, len(blocks))
	for i := len(blocks) - 1; i >= 0; i-- {
		for _, n := range blocks[i].names {
			keep[i] = keep[i] || need[n]
		}
		if keep[i] {
			for _, id := range luaCodeIdents(t, name, blocks[i].text) {
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
	return b.String() + body
}

// luaCodeIdents is every name Lua code refers to (comments and strings
// left out).
func luaCodeIdents(t *testing.T, name, src string) []string {
	t.Helper()
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var ids []string
	walkLua(reflect.ValueOf(chunk), func(v any) {
		if id, ok := v.(*ast.IdentExpr); ok {
			ids = append(ids, id.Value)
		}
	})
	return ids
}

// walkLua calls f with every node under v (a parsed chunk).
func walkLua(v reflect.Value, f func(node any)) {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return
		}
		f(v.Interface())
		walkLua(v.Elem(), f)
	case reflect.Slice:
		for i := range v.Len() {
			walkLua(v.Index(i), f)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				walkLua(v.Field(i), f)
			}
		}
	}
}

// luaArgFields parses Lua source and returns the fields of A it mentions
// (A.<name>) and those it assigns; reading A other than by a constant
// name is a problem (the check could not see the field).
func luaArgFields(t *testing.T, name, src string) (reads, writes map[string]bool, problems []string) {
	t.Helper()
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	reads, writes = map[string]bool{}, map[string]bool{}
	field := func(e ast.Expr) (string, bool) {
		g, ok := e.(*ast.AttrGetExpr)
		if !ok {
			return "", false
		}
		if id, ok := g.Object.(*ast.IdentExpr); !ok || id.Value != "A" {
			return "", false
		}
		k, ok := g.Key.(*ast.StringExpr)
		if !ok {
			problems = append(problems, "reads A by a computed name (line "+strconv.Itoa(g.Line())+")")
			return "", false
		}
		return k.Value, true
	}
	walkLua(reflect.ValueOf(chunk), func(node any) {
		if e, ok := node.(ast.Expr); ok {
			if f, ok := field(e); ok {
				reads[f] = true
			}
		}
		if a, ok := node.(*ast.AssignStmt); ok {
			for _, l := range a.Lhs {
				if f, ok := field(l); ok {
					writes[f] = true
				}
			}
		}
	})
	return reads, writes, problems
}

// jsonTags adds the JSON field names of struct type typ to tags (embedded
// structs' flattened, as encoding/json does) and returns what is wrong: an
// exported field without a json name would be sent under its Go name.
func jsonTags(typ reflect.Type, tags map[string]bool) []string {
	var problems []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct:
			problems = append(problems, jsonTags(f.Type, tags)...)
		case !f.IsExported() || tag == "-":
		case tag == "":
			problems = append(problems, typ.Name()+"."+f.Name+" has no json tag")
		case tags[tag] && typ.Kind() == reflect.Struct:
			tags[tag] = true // another type of the script has it too
		default:
			tags[tag] = true
		}
	}
	return problems
}
