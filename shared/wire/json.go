package wire

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// A small strict JSON parser (RFC 8259). encoding/json cannot report
// duplicate keys, keep number literals while telling integers from floats,
// or word its errors as serde_json does, which Ocypod clients see; this one
// does all three. Error texts and their "at line L column C" positions follow
// serde_json: the column counts bytes up to and including the offending one.

// maxJSONDepth bounds nesting as serde_json does: 127 levels are accepted.
const maxJSONDepth = 128

type Kind uint8

const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// Value is a parsed JSON value.
type Value struct {
	Kind    Kind
	Text    string   // a string's decoded value, a number's or a bool's literal
	Elems   []Value  // array elements
	Members []Member // object members in document order, duplicates kept
	End     int      // offset just past the value
}

type Member struct {
	Key    string
	KeyEnd int // offset just past the key's closing quote
	Value  Value
}

// SyntaxError is a body that is not acceptable JSON, with its position.
type SyntaxError struct {
	msg          string
	line, column int
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s at line %d column %d", e.msg, e.line, e.column)
}

// ErrorAt returns a SyntaxError for the byte at offset i of src (i may be
// len(src) for the end of input), positioned as serde_json does.
func ErrorAt(src []byte, i int, msg string) *SyntaxError {
	i = min(i+1, len(src))
	start := bytes.LastIndexByte(src[:i], '\n') + 1
	return &SyntaxError{msg: msg, line: 1 + bytes.Count(src[:start], []byte{'\n'}), column: i - start}
}

// Parse parses src, which must hold exactly one JSON value, optionally
// surrounded by whitespace.
func Parse(src []byte) (Value, error) {
	if !utf8.Valid(src) {
		i := 0
		for i < len(src) {
			r, w := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && w == 1 {
				break
			}
			i += w
		}
		return Value{}, ErrorAt(src, i, "invalid unicode code point")
	}
	p := &jsonParser{src: src}
	v, err := p.parseValue()
	if err != nil {
		return Value{}, err
	}
	p.skipSpace()
	if p.i < len(src) {
		return Value{}, p.fail("trailing characters")
	}
	return v, nil
}

type jsonParser struct {
	src   []byte
	i     int
	depth int
}

func (p *jsonParser) fail(msg string) error { return ErrorAt(p.src, p.i, msg) }

func (p *jsonParser) skipSpace() {
	for p.i < len(p.src) {
		switch p.src[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// peek skips whitespace and returns the next byte, or ok=false at the end.
func (p *jsonParser) peek() (byte, bool) {
	p.skipSpace()
	if p.i >= len(p.src) {
		return 0, false
	}
	return p.src[p.i], true
}

func (p *jsonParser) parseValue() (Value, error) {
	c, ok := p.peek()
	if !ok {
		return Value{}, p.fail("EOF while parsing a value")
	}
	switch {
	case c == 'n':
		return p.ident("null", Null)
	case c == 't':
		return p.ident("true", Bool)
	case c == 'f':
		return p.ident("false", Bool)
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == '"':
		p.i++
		s, err := p.str()
		return Value{Kind: String, Text: s, End: p.i}, err
	case c == '[':
		return p.array()
	case c == '{':
		return p.object()
	default:
		return Value{}, p.fail("expected value")
	}
}

func (p *jsonParser) ident(word string, kind Kind) (Value, error) {
	for k := 0; k < len(word); k++ {
		if p.i >= len(p.src) {
			return Value{}, p.fail("EOF while parsing a value")
		}
		if p.src[p.i] != word[k] {
			return Value{}, p.fail("expected ident")
		}
		p.i++
	}
	return Value{Kind: kind, Text: word, End: p.i}, nil
}

func (p *jsonParser) digits() int {
	n := 0
	for p.i < len(p.src) && p.src[p.i] >= '0' && p.src[p.i] <= '9' {
		p.i++
		n++
	}
	return n
}

// someDigits reads at least one digit, as required after '-', '.' or 'e'.
func (p *jsonParser) someDigits() error {
	if p.i >= len(p.src) {
		return p.fail("EOF while parsing a value")
	}
	if p.digits() == 0 {
		return p.fail("invalid number")
	}
	return nil
}

func (p *jsonParser) number() (Value, error) {
	start := p.i
	if p.src[p.i] == '-' {
		p.i++
	}
	if p.i < len(p.src) && p.src[p.i] == '0' {
		p.i++
		if p.i < len(p.src) && p.src[p.i] >= '0' && p.src[p.i] <= '9' {
			return Value{}, p.fail("invalid number")
		}
	} else if err := p.someDigits(); err != nil {
		return Value{}, err
	}
	isFloat := false
	if p.i < len(p.src) && p.src[p.i] == '.' {
		isFloat = true
		p.i++
		if err := p.someDigits(); err != nil {
			return Value{}, err
		}
	}
	if p.i < len(p.src) && (p.src[p.i] == 'e' || p.src[p.i] == 'E') {
		isFloat = true
		p.i++
		if p.i < len(p.src) && (p.src[p.i] == '+' || p.src[p.i] == '-') {
			p.i++
		}
		if err := p.someDigits(); err != nil {
			return Value{}, err
		}
	}
	text := string(p.src[start:p.i])
	// Like serde_json, refuse numbers no float64 can hold: kept as text,
	// they would be infinities to most clients.
	if isFloat || len(text) > 300 {
		if f, err := strconv.ParseFloat(text, 64); err != nil && math.IsInf(f, 0) {
			return Value{}, p.fail("number out of range")
		}
	}
	return Value{Kind: Number, Text: text, End: p.i}, nil
}

// str reads a string's contents after its opening quote.
func (p *jsonParser) str() (string, error) {
	var buf []byte // nil until the first escape
	start := p.i
	for {
		if p.i >= len(p.src) {
			return "", p.fail("EOF while parsing a string")
		}
		switch c := p.src[p.i]; {
		case c == '"':
			s := p.src[start:p.i]
			p.i++
			if buf != nil {
				return string(append(buf, s...)), nil
			}
			return string(s), nil
		case c == '\\':
			buf = append(buf, p.src[start:p.i]...)
			p.i++
			var err error
			if buf, err = p.escape(buf); err != nil {
				return "", err
			}
			start = p.i
		case c < 0x20:
			return "", p.fail("control character (\\u0000-\\u001F) found while parsing a string")
		default:
			p.i++
		}
	}
}

func (p *jsonParser) escape(buf []byte) ([]byte, error) {
	if p.i >= len(p.src) {
		return nil, p.fail("EOF while parsing a string")
	}
	c := p.src[p.i]
	p.i++
	switch c {
	case '"', '\\', '/':
		return append(buf, c), nil
	case 'b':
		return append(buf, '\b'), nil
	case 'f':
		return append(buf, '\f'), nil
	case 'n':
		return append(buf, '\n'), nil
	case 'r':
		return append(buf, '\r'), nil
	case 't':
		return append(buf, '\t'), nil
	case 'u':
	default:
		p.i--
		return nil, p.fail("invalid escape")
	}
	r, err := p.hex4()
	if err != nil {
		return nil, err
	}
	switch {
	case utf16.IsSurrogate(r) && r >= 0xDC00:
		p.i--
		return nil, p.fail("lone leading surrogate in hex escape")
	case utf16.IsSurrogate(r):
		if p.i+1 >= len(p.src) || p.src[p.i] != '\\' || p.src[p.i+1] != 'u' {
			return nil, p.fail("unexpected end of hex escape")
		}
		p.i += 2
		r2, err := p.hex4()
		if err != nil {
			return nil, err
		}
		if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
			p.i--
			return nil, p.fail("lone leading surrogate in hex escape")
		}
	}
	return utf8.AppendRune(buf, r), nil
}

func (p *jsonParser) hex4() (rune, error) {
	var r rune
	for k := 0; k < 4; k++ {
		if p.i >= len(p.src) {
			return 0, p.fail("EOF while parsing a string")
		}
		c := p.src[p.i]
		if !isHex(c) {
			return 0, p.fail("invalid escape")
		}
		r = r<<4 | rune(unhex(c))
		p.i++
	}
	return r, nil
}

func (p *jsonParser) enter() error {
	p.depth++
	if p.depth >= maxJSONDepth {
		return p.fail("recursion limit exceeded")
	}
	p.i++ // the opening bracket
	return nil
}

func (p *jsonParser) array() (Value, error) {
	if err := p.enter(); err != nil {
		return Value{}, err
	}
	v := Value{Kind: Array}
	c, ok := p.peek()
	if ok && c == ']' {
		p.i++
		p.depth--
		v.End = p.i
		return v, nil
	}
	for {
		if !ok {
			return Value{}, p.fail("EOF while parsing a list")
		}
		e, err := p.parseValue()
		if err != nil {
			return Value{}, err
		}
		v.Elems = append(v.Elems, e)
		c, ok = p.peek()
		switch {
		case !ok:
			return Value{}, p.fail("EOF while parsing a list")
		case c == ']':
			p.i++
			p.depth--
			v.End = p.i
			return v, nil
		case c != ',':
			return Value{}, p.fail("expected `,` or `]`")
		}
		p.i++
		c, ok = p.peek()
		if !ok {
			return Value{}, p.fail("EOF while parsing a value")
		}
		if c == ']' {
			return Value{}, p.fail("trailing comma")
		}
	}
}

func (p *jsonParser) object() (Value, error) {
	if err := p.enter(); err != nil {
		return Value{}, err
	}
	v := Value{Kind: Object}
	c, ok := p.peek()
	if !ok {
		return Value{}, p.fail("EOF while parsing an object")
	}
	if c == '}' {
		p.i++
		p.depth--
		v.End = p.i
		return v, nil
	}
	for {
		if c != '"' {
			return Value{}, p.fail("key must be a string")
		}
		p.i++
		key, err := p.str()
		if err != nil {
			return Value{}, err
		}
		m := Member{Key: key, KeyEnd: p.i}
		if c, ok = p.peek(); !ok {
			return Value{}, p.fail("EOF while parsing an object")
		} else if c != ':' {
			return Value{}, p.fail("expected `:`")
		}
		p.i++
		if m.Value, err = p.parseValue(); err != nil {
			return Value{}, err
		}
		v.Members = append(v.Members, m)
		c, ok = p.peek()
		switch {
		case !ok:
			return Value{}, p.fail("EOF while parsing an object")
		case c == '}':
			p.i++
			p.depth--
			v.End = p.i
			return v, nil
		case c != ',':
			return Value{}, p.fail("expected `,` or `}`")
		}
		p.i++
		c, ok = p.peek()
		if !ok {
			return Value{}, p.fail("EOF while parsing a value")
		}
		if c == '}' {
			return Value{}, p.fail("trailing comma")
		}
	}
}
