package wire

import (
	"math"
	"strconv"
	"testing"
)

// TestAppendFloat checks serde_json's (ryu's) renderings of f64 values.
func TestAppendFloat(t *testing.T) {
	t.Parallel()
	for f, want := range map[float64]string{
		0: "0.0", 1: "1.0", 2: "2.0", -3: "-3.0", 0.5: "0.5", 1.5: "1.5", 12.34: "12.34",
		100: "100.0", 1e15: "1000000000000000.0", 1e16: "1e16", 1e17: "1e17",
		1.5e17: "1.5e17", 1e22: "1e22", 1.2345e30: "1.2345e30", 0.1: "0.1", 0.001234: "0.001234",
		0.0001: "0.0001", 0.00001: "0.00001", 1e-6: "1e-6", 1.5e-7: "1.5e-7", 123456.789: "123456.789",
		math.MaxFloat64: "1.7976931348623157e308", 5e-324: "5e-324", 1234567890123456.7: "1234567890123456.8",
		math.Inf(1): "null", math.NaN(): "null", 2.0 / 3: "0.6666666666666666",
	} {
		if got := string(AppendFloat(nil, f)); got != want {
			t.Errorf("AppendFloat(%v) = %s, want %s", f, got, want)
		}
	}
	if got := string(AppendFloat(nil, math.Copysign(0, -1))); got != "-0.0" {
		t.Errorf("AppendFloat(-0) = %s, want -0.0", got)
	}
}

// FuzzAppendFloat: every finite value reads back exactly.
func FuzzAppendFloat(f *testing.F) {
	for _, x := range []float64{0, 1, 0.1, 1e22, 1.5e-7, 123.456, -9.75e300} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		s := string(AppendFloat(nil, x))
		if math.IsNaN(x) || math.IsInf(x, 0) {
			if s != "null" {
				t.Fatalf("AppendFloat(%v) = %s, want null", x, s)
			}
			return
		}
		back, err := strconv.ParseFloat(s, 64)
		if err != nil || back != x {
			t.Fatalf("AppendFloat(%v) = %s, reads back as %v (%v)", x, s, back, err)
		}
	})
}
