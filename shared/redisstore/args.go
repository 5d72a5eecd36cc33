package redisstore

import (
	"reflect"
	"strconv"
	"unicode/utf8"
)

// Script arguments.
//
// A script takes one JSON object, A (scripts/lib/base.lua). Store.argv
// writes the fields every call carries (commonArgs) and then the call's
// own: a struct of the type its script declares (loadScript), named after
// the script (takeArgs for take.lua), whose json tags are exactly the
// A.<name> fields the script and the helpers it uses read
// (TestScriptArgsMatchLua). Lua tells apart a field that is absent (nil),
// false, 0 and "" (the last two are true in Lua): a field sent only in
// some calls has omitempty (or omitzero) when its zero value is never
// sent, a pointer when it is. The structs of the hot calls write their own
// JSON (argAppender), which a test checks against encoding/json's.

// commonArgs are the fields Store.argv writes in every call (queue only
// when the call names one).
var commonArgs = []string{"now", "ms", "p", "P", "rand", "stats_ttl", "queue"}

// argAppender is a script argument that writes its own fields, each as
// `,"name":value`, as encoding/json would write them: the hot calls'
// arguments, which so cost no reflection.
type argAppender interface {
	appendArgs(b []byte) []byte
}

// jobArg is the job a call is about (A.id, a decimal string), set by
// Store.jobCall.
type jobArg struct {
	ID uint64 `json:"id,string"`
}

func (a *jobArg) setJob(id uint64) { a.ID = id }

// jobArgs is the argument of a call about one job.
type jobArgs interface{ setJob(id uint64) }

func (a *jobArg) appendID(b []byte) []byte {
	b = append(b, `,"id":"`...)
	b = strconv.AppendUint(b, a.ID, 10)
	return append(b, '"')
}

// luaUint is an unsigned number as a script takes it: a JSON number while
// cjson keeps it exact (below 2^46; it formats 14 significant digits),
// else a decimal string.
type luaUint uint64

func (n luaUint) MarshalJSON() ([]byte, error) { return n.appendJSON(nil), nil }

func (n luaUint) appendJSON(b []byte) []byte {
	if n < 1<<46 {
		return strconv.AppendUint(b, uint64(n), 10)
	}
	b = append(b, '"')
	b = strconv.AppendUint(b, uint64(n), 10)
	return append(b, '"')
}

// optUint is n as an optional luaUint (nil for none).
func optUint[T ~uint64](n *T) *luaUint {
	if n == nil {
		return nil
	}
	v := luaUint(*n)
	return &v
}

// argTypes are the argument types a script declares, as loadScript takes
// them (values or pointers of struct types).
func argTypes(args []any) []reflect.Type {
	out := make([]reflect.Type, len(args))
	for i, a := range args {
		t := reflect.TypeOf(a)
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			panic("redisstore: a script's argument type must be a struct, not " + t.String())
		}
		out[i] = t
	}
	return out
}

// takes reports whether args is an argument sc declared: nil for a script
// that takes none, else a pointer to (or a value of) one of its types.
func (sc *script) takes(args any) bool {
	if args == nil {
		return len(sc.args) == 0
	}
	v := reflect.ValueOf(args)
	t := v.Type()
	if t.Kind() == reflect.Pointer {
		if v.IsNil() {
			return false
		}
		t = t.Elem()
	}
	for _, want := range sc.args {
		if t == want {
			return true
		}
	}
	return false
}

// Hand-written JSON.

func appendField(b []byte, name string) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

func appendStringField(b []byte, name, v string) []byte {
	return appendJSONString(appendField(b, name), v)
}

func appendIntField(b []byte, name string, v int64) []byte {
	return strconv.AppendInt(appendField(b, name), v, 10)
}

func appendBoolField(b []byte, name string, v bool) []byte {
	return strconv.AppendBool(appendField(b, name), v)
}

// appendStrings appends l as a JSON array (null for nil, as encoding/json).
func appendStrings(b []byte, l []string) []byte {
	if l == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string, byte for byte as
// encoding/json writes it (HTML characters, U+2028 and U+2029 escaped,
// invalid UTF-8 replaced by U+FFFD).
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func appendOptUint(b []byte, name string, v *luaUint) []byte {
	if v == nil {
		return b
	}
	return v.appendJSON(appendField(b, name))
}

// closeObject makes the fields appended to b since start (each
// `,"name":value`) a JSON object.
func closeObject(b []byte, start int) []byte {
	if len(b) == start {
		return append(b, '{', '}')
	}
	b[start] = '{'
	return append(b, '}')
}
