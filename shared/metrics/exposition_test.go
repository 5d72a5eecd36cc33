package metrics

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// exposition is a parsed Prometheus text exposition (format 0.0.4).
type exposition struct {
	types   map[string]string  // family -> counter, gauge, histogram, ...
	help    map[string]string  // family -> its HELP text
	samples map[string]float64 // canonical series (name{a="x",b="y"}, labels sorted) -> value
}

var (
	metricNameRE = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	labelRE      = regexp.MustCompile(`^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"`)
	typesKnown   = []string{"counter", "gauge", "histogram", "summary", "untyped"}
)

// parseExposition checks text against the text format's grammar and its
// rules that a scraper enforces: one TYPE per family, before its samples;
// a sample's name belongs to its family (histograms: _bucket, _sum,
// _count; summaries: _sum, _count); no series twice; histogram buckets cumulative, ending in +Inf
// equal to _count.
func parseExposition(text string) (*exposition, error) {
	e := &exposition{types: map[string]string{}, help: map[string]string{}, samples: map[string]float64{}}
	if text != "" && !strings.HasSuffix(text, "\n") {
		return nil, fmt.Errorf("the exposition does not end with a newline")
	}
	seen := map[string]bool{} // families whose samples have started
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if err := e.line(line, seen); err != nil {
			return nil, fmt.Errorf("line %d %q: %w", i+1, line, err)
		}
	}
	return e, e.checkHistograms()
}

func (e *exposition) line(line string, seen map[string]bool) error {
	if rest, ok := strings.CutPrefix(line, "# "); ok {
		f := strings.SplitN(rest, " ", 3)
		switch {
		case f[0] == "HELP" && len(f) >= 2 && metricNameRE.MatchString(f[1]):
			if len(f) == 3 {
				e.help[f[1]] = f[2]
			}
			return nil
		case f[0] == "TYPE" && len(f) == 3 && metricNameRE.MatchString(f[1]) && slices.Contains(typesKnown, f[2]):
			if _, dup := e.types[f[1]]; dup || seen[f[1]] {
				return fmt.Errorf("TYPE of %s repeated or after its samples", f[1])
			}
			e.types[f[1]] = f[2]
			return nil
		}
		return fmt.Errorf("malformed HELP or TYPE line")
	}
	name, rest, _ := strings.Cut(line, "{")
	var labels []string
	if strings.Contains(line, "{") {
		for !strings.HasPrefix(rest, "}") {
			m := labelRE.FindStringSubmatch(rest)
			if m == nil {
				return fmt.Errorf("malformed label at %q", rest)
			}
			labels = append(labels, m[0])
			rest = strings.TrimLeft(strings.TrimPrefix(rest[len(m[0]):], ","), " \t")
		}
		rest = rest[1:]
	} else {
		name, rest, _ = strings.Cut(line, " ")
		rest = " " + rest
	}
	value, ok := strings.CutPrefix(rest, " ")
	if !ok || !metricNameRE.MatchString(name) {
		return fmt.Errorf("malformed sample")
	}
	v, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return fmt.Errorf("value: %w", err)
	}
	family := e.family(name)
	if family == "" {
		return fmt.Errorf("sample %s has no TYPE", name)
	}
	if e.types[family] == "counter" && (v < 0 || math.IsNaN(v)) {
		return fmt.Errorf("counter %s = %v", name, v)
	}
	seen[family] = true
	slices.Sort(labels)
	key := name + "{" + strings.Join(labels, ",") + "}"
	if _, dup := e.samples[key]; dup {
		return fmt.Errorf("series %s repeated", key)
	}
	e.samples[key] = v
	return nil
}

// family is the TYPE'd family a sample name belongs to, or "".
func (e *exposition) family(name string) string {
	if t, ok := e.types[name]; ok && t != "histogram" {
		return name // a summary's quantiles carry its own name
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suffix)
		if t := e.types[base]; ok && (t == "histogram" || t == "summary" && suffix != "_bucket") {
			return base
		}
	}
	return ""
}

// checkHistograms checks that every histogram series' buckets never
// decrease as le grows and end with le="+Inf" equal to _count.
func (e *exposition) checkHistograms() error {
	type bucket struct{ le, n float64 }
	buckets := map[string][]bucket{}
	for key, v := range e.samples {
		name, labels, _ := strings.Cut(strings.TrimSuffix(key, "}"), "{")
		base, ok := strings.CutSuffix(name, "_bucket")
		if !ok || e.types[base] != "histogram" {
			continue
		}
		var rest []string
		le := math.NaN()
		for l := range strings.SplitSeq(labels, ",") {
			if s, ok := strings.CutPrefix(l, `le="`); ok {
				le, _ = strconv.ParseFloat(strings.TrimSuffix(s, `"`), 64)
			} else if l != "" {
				rest = append(rest, l)
			}
		}
		if math.IsNaN(le) {
			return fmt.Errorf("bucket %s without a valid le", key)
		}
		series := base + "{" + strings.Join(rest, ",") + "}"
		buckets[series] = append(buckets[series], bucket{le, v})
	}
	for series, bs := range buckets {
		slices.SortFunc(bs, func(a, b bucket) int { return cmpFloat(a.le, b.le) })
		for i := 1; i < len(bs); i++ {
			if bs[i].n < bs[i-1].n {
				return fmt.Errorf("%s: bucket le=%v holds %v, fewer than le=%v", series, bs[i].le, bs[i].n, bs[i-1].le)
			}
		}
		name, labels, _ := strings.Cut(series, "{")
		count, ok := e.samples[name+"_count{"+labels]
		if last := bs[len(bs)-1]; !math.IsInf(last.le, 1) || !ok || last.n != count {
			return fmt.Errorf("%s: +Inf bucket %v, _count %v", series, last, count)
		}
	}
	return nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// value returns the sample of series (labels in any order) and whether it
// exists.
func (e *exposition) value(name string, labels ...string) (float64, bool) {
	slices.Sort(labels)
	v, ok := e.samples[name+"{"+strings.Join(labels, ",")+"}"]
	return v, ok
}
