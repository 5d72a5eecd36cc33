package wire

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// RustQuote quotes s as Rust's Debug formatting of a str does, which is how
// upstream's messages show user text: backslash escapes for quotes,
// backslashes, \t \r \n \0, and \u{..} for other non-printable characters.
// Invalid UTF-8 shows as U+FFFD, as upstream's lossy decoding produced.
func RustQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		case '\n':
			b.WriteString(`\n`)
		case 0:
			b.WriteString(`\0`)
		default:
			if r == ' ' || unicode.IsPrint(r) {
				b.WriteRune(r)
			} else {
				fmt.Fprintf(&b, `\u{%x}`, r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// PercentDecode decodes %XX escapes in a path segment. Like upstream's
// router, it leaves malformed escapes as they are and does not turn '+' into
// a space.
func PercentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

// FormDecode decodes an application/x-www-form-urlencoded query component:
// '+' is a space and %XX escapes are decoded; malformed escapes stay as they
// are and invalid UTF-8 becomes U+FFFD, as upstream's query parser did.
func FormDecode(s string) string {
	s = PercentDecode(strings.ReplaceAll(s, "+", " "))
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// ParseU64 parses a path segment as Rust's u64 parser does: decimal digits
// with an optional leading '+', leading zeros allowed. Anything else,
// overflow included, is Ocypod's 404 with the segment quoted Rust-style.
func ParseU64(s string) (uint64, error) {
	digits := strings.TrimPrefix(s, "+")
	ok := digits != ""
	for i := 0; ok && i < len(digits); i++ {
		ok = digits[i] >= '0' && digits[i] <= '9'
	}
	if ok {
		if id, err := strconv.ParseUint(digits, 10, 64); err == nil {
			return id, nil
		}
	}
	return 0, BadU64(s)
}

// ValidText returns s with invalid UTF-8 replaced by U+FFFD, as Ocypod's
// lossy decoding of path segments did.
func ValidText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
