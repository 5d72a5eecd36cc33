package wire

import (
	"math"
	"strconv"
)

// AppendFloat appends f as serde_json writes an f64 (ryu's shortest
// round-trip digits): 2.0, 0.5, 1e22, 1.5e-7, 0.0001; a value that is
// not finite is null, as serde_json writes it.
func AppendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(b, "-0.0"...)
		}
		return append(b, "0.0"...)
	}
	// The shortest digits d1.d2d3...e±X from strconv, then ryu's layout.
	var tmp [32]byte
	s := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64)
	if s[0] == '-' {
		b = append(b, '-')
		s = s[1:]
	}
	e := len(s) - 1
	for s[e] != 'e' {
		e--
	}
	exp, _ := strconv.Atoi(string(s[e+1:]))
	var digits [24]byte
	nd := 0
	for _, c := range s[:e] {
		if c != '.' {
			digits[nd] = c
			nd++
		}
	}
	// The value is 0.d1d2...dn × 10^kk.
	kk := exp + 1
	switch {
	case nd <= kk && kk <= 16: // 1234e7 -> 12340000000.0
		b = append(b, digits[:nd]...)
		for range kk - nd {
			b = append(b, '0')
		}
		return append(b, ".0"...)
	case 0 < kk && kk <= 16: // 1234e-2 -> 12.34
		b = append(b, digits[:kk]...)
		b = append(b, '.')
		return append(b, digits[kk:nd]...)
	case -5 < kk && kk <= 0: // 1234e-6 -> 0.001234
		b = append(b, "0."...)
		for range -kk {
			b = append(b, '0')
		}
		return append(b, digits[:nd]...)
	case nd == 1: // 1e30
		b = append(b, digits[0], 'e')
		return strconv.AppendInt(b, int64(kk-1), 10)
	default: // 1234e30 -> 1.234e33
		b = append(b, digits[0], '.')
		b = append(b, digits[1:nd]...)
		b = append(b, 'e')
		return strconv.AppendInt(b, int64(kk-1), 10)
	}
}
