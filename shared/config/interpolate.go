package config

import (
	"regexp"
	"slices"
	"strings"
)

// varRE matches ${NAME} and ${NAME=default}. Names are upper case, so
// ${lower} (and anything else) is left as it is.
var varRE = regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]*)(=[^}]*)?\}`)

// InterpolationError lists the variables that were referenced without a
// default and are not set.
type InterpolationError struct {
	Missing []string // sorted, without duplicates
}

func (e *InterpolationError) Error() string {
	return "could not interpolate environment variables into config, the following variables were not set: " +
		strings.Join(e.Missing, ", ")
}

// Interpolate replaces, anywhere in text (comments and section names
// included), ${NAME} by the value of NAME and ${NAME=default} by the value
// of NAME or, if NAME is not set, by default. A variable that is set wins even
// when empty; each occurrence has its own default. Values are inserted raw,
// without TOML escaping. Variables that are unset and have no default are all
// reported in one *InterpolationError.
func Interpolate(text string, getenv func(string) (string, bool)) (string, error) {
	if getenv == nil {
		getenv = noEnv
	}
	var missing []string
	out := varRE.ReplaceAllStringFunc(text, func(m string) string {
		sub := varRE.FindStringSubmatch(m)
		name, def := sub[1], sub[2]
		if v, ok := getenv(name); ok {
			return v
		}
		if def != "" { // "=..." including the bare "=" of an empty default
			return def[1:]
		}
		missing = append(missing, name)
		return m
	})
	if len(missing) > 0 {
		slices.Sort(missing)
		return "", &InterpolationError{Missing: slices.Compact(missing)}
	}
	return out, nil
}
