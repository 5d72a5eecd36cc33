package wire

import (
	"strconv"
	"strings"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Doc is a parsed request body. Src positions its errors, which read as
// serde's: "Json deserialize error: <message> at line L column C".
type Doc struct {
	Src  []byte
	Root Value
}

// ParseDoc parses a request body.
func ParseDoc(src []byte) (*Doc, error) {
	v, err := Parse(src)
	if err != nil {
		return nil, JSONError(err)
	}
	return &Doc{Src: src, Root: v}, nil
}

// Fail is a 400 for the value ending at offset end.
func (d *Doc) Fail(end int, msg string) error {
	return JSONError(ErrorAt(d.Src, end, msg))
}

// InvalidType is serde's "invalid type: <what v is>, expected <expected>".
func (d *Doc) InvalidType(v *Value, expected string) error {
	return d.Fail(v.End, "invalid type: "+Describe(v)+", expected "+expected)
}

// Describe names v as serde's "invalid type" messages do.
func Describe(v *Value) string {
	switch v.Kind {
	case Null:
		return "null"
	case Bool:
		return "boolean `" + v.Text + "`"
	case Number:
		if IsFloatLiteral(v.Text) {
			return "floating point `" + v.Text + "`"
		}
		return "integer `" + v.Text + "`"
	case String:
		return "string " + RustQuote(v.Text)
	case Array:
		return "sequence"
	default:
		return "map"
	}
}

// IsFloatLiteral reports whether a number literal has a fraction or an
// exponent (serde reads it as a float then).
func IsFloatLiteral(s string) bool { return strings.ContainsAny(s, ".eE") }

// Members calls fn, in document order, for each member of the object obj
// whose key is in known. Other keys are ignored, as Ocypod does; a known
// key given twice is refused, as serde does. obj must be an object.
func (d *Doc) Members(obj *Value, known []string, fn func(key string, v *Value) error) error {
	if obj.Kind != Object {
		return d.InvalidType(obj, "a JSON object")
	}
	var seen [8]string
	dup := seen[:0]
	for i := range obj.Members {
		m := &obj.Members[i]
		if !contains(known, m.Key) {
			continue
		}
		if contains(dup, m.Key) {
			return d.Fail(m.KeyEnd, "duplicate field `"+m.Key+"`")
		}
		dup = append(dup, m.Key)
		if err := fn(m.Key, &m.Value); err != nil {
			return err
		}
	}
	return nil
}

// UnknownKey returns the first key of obj (an object) that known lacks, in
// document order.
func UnknownKey(obj *Value, known []string) (string, bool) {
	for i := range obj.Members {
		if !contains(known, obj.Members[i].Key) {
			return obj.Members[i].Key, true
		}
	}
	return "", false
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Duration reads a duration string, truncated to whole seconds as Ocypod
// stores job and queue settings.
func (d *Doc) Duration(v *Value) (ocypod.Duration, error) {
	if v.Kind != String {
		return ocypod.Duration{}, d.InvalidType(v, "a duration string")
	}
	dur, err := ocypod.ParseDuration(v.Text)
	if err != nil {
		return ocypod.Duration{}, d.Fail(v.End, err.Error())
	}
	return dur.Truncate(), nil
}

// Durations reads an array of duration strings.
func (d *Doc) Durations(v *Value) ([]ocypod.Duration, error) {
	if v.Kind != Array {
		return nil, d.InvalidType(v, "a sequence")
	}
	ds := make([]ocypod.Duration, len(v.Elems))
	for i := range v.Elems {
		var err error
		if ds[i], err = d.Duration(&v.Elems[i]); err != nil {
			return nil, err
		}
	}
	return ds, nil
}

// Uint64 reads a u64 as serde does: an integer literal (-0 included) that
// fits.
func (d *Doc) Uint64(v *Value) (uint64, error) {
	if v.Kind != Number || IsFloatLiteral(v.Text) {
		return 0, d.InvalidType(v, "u64")
	}
	if v.Text == "-0" {
		return 0, nil
	}
	n, err := strconv.ParseUint(v.Text, 10, 64)
	if err != nil {
		return 0, d.Fail(v.End, "invalid value: integer `"+v.Text+"`, expected u64")
	}
	return n, nil
}

// Strings reads an array of strings.
func (d *Doc) Strings(v *Value) ([]string, error) {
	if v.Kind != Array {
		return nil, d.InvalidType(v, "a sequence")
	}
	ss := make([]string, len(v.Elems))
	for i := range v.Elems {
		e := &v.Elems[i]
		if e.Kind != String {
			return nil, d.InvalidType(e, "a string")
		}
		ss[i] = e.Text
	}
	return ss, nil
}
