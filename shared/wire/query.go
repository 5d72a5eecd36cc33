package wire

import "strings"

// Query is a request's query string as Ocypod's extractor
// (serde_urlencoded) reads it: '&'-separated key=value pairs, each
// form-decoded; a key without '=' has the empty value.
type Query struct {
	raw string
}

// ParseQuery returns the query of a raw query string. Nothing is decoded
// until a key is asked for.
func ParseQuery(raw string) Query { return Query{raw: raw} }

// Get returns the value of key and whether it is present. A key given more
// than once is serde's 400 "duplicate field", whatever the values.
func (q Query) Get(key string) (string, bool, error) {
	var value string
	found := false
	for rest := q.raw; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, "&")
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		if k != key && FormDecode(k) != key {
			continue
		}
		if found {
			return "", false, DuplicateQueryField(key)
		}
		found, value = true, FormDecode(v)
	}
	return value, found, nil
}

// Has reports whether any of keys is present (whatever its value).
func (q Query) Has(keys ...string) bool {
	for rest := q.raw; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, "&")
		k, _, _ := strings.Cut(part, "=")
		if k == "" {
			continue
		}
		k = FormDecode(k)
		for _, key := range keys {
			if k == key {
				return true
			}
		}
	}
	return false
}

// Keys returns the query's keys, form-decoded, in order (a repeated key
// as often as it appears).
func (q Query) Keys() []string {
	var keys []string
	for rest := q.raw; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, "&")
		if part == "" {
			continue
		}
		if k, _, _ := strings.Cut(part, "="); k != "" {
			keys = append(keys, FormDecode(k))
		}
	}
	return keys
}

// List splits a comma-separated parameter value into its items, each
// kept once, in the order of first appearance: a repeated item counts
// once, so an answer never grows with repetitions.
func List(value string) []string {
	items := strings.Split(value, ",")
	out := items[:0]
	if len(items) <= 16 {
		for _, it := range items {
			if !contains(out, it) {
				out = append(out, it)
			}
		}
		return out
	}
	seen := make(map[string]bool, len(items))
	for _, it := range items {
		if !seen[it] {
			seen[it] = true
			out = append(out, it)
		}
	}
	return out
}
