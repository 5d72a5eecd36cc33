package emftest

import (
	"strings"
	"testing"
)

// valid is the specification's own kind of example: one directive, two
// dimension sets, a number and an array of numbers.
const valid = `{"_aws":{"Timestamp":1574109732004,"CloudWatchMetrics":[{"Namespace":"lambda-function-metrics",` +
	`"Dimensions":[["functionVersion"],[]],"Metrics":[{"Name":"time","Unit":"Milliseconds","StorageResolution":60},` +
	`{"Name":"hits"}]}]},"functionVersion":"$LATEST","time":100,"hits":[1,2.5],"requestId":"989ffbf8"}`

func TestParseValid(t *testing.T) {
	t.Parallel()
	ms, root, err := Parse([]byte(valid + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 4 || root["requestId"] != "989ffbf8" {
		t.Fatalf("metrics %+v, want time and hits for each of 2 dimension sets", ms)
	}
	if m := ms[0]; m.Name != "time" || m.Unit != "Milliseconds" || m.Dimensions["functionVersion"] != "$LATEST" || m.Values[0] != 100 {
		t.Errorf("first metric %+v", m)
	}
	if m := ms[3]; m.Name != "hits" || len(m.Dimensions) != 0 || len(m.Values) != 2 || m.Values[1] != 2.5 {
		t.Errorf("last metric %+v", m)
	}
}

// TestParseRefuses: each change breaks one rule of the specification.
func TestParseRefuses(t *testing.T) {
	t.Parallel()
	tests := map[string]struct{ from, to string }{
		"metric value missing":      {`"time":100,`, ``},
		"metric value is a string":  {`"time":100`, `"time":"100"`},
		"metric value array empty":  {`"hits":[1,2.5]`, `"hits":[]`},
		"metric value array string": {`"hits":[1,2.5]`, `"hits":[1,"x"]`},
		"unit invalid":              {`"Unit":"Milliseconds"`, `"Unit":"Millis"`},
		"resolution invalid":        {`"StorageResolution":60`, `"StorageResolution":30`},
		"definition extra member":   {`{"Name":"hits"}`, `{"Name":"hits","Value":1}`},
		"definition without name":   {`{"Name":"hits"}`, `{"Unit":"Count"}`},
		"directive extra member":    {`"Namespace":"lambda-function-metrics",`, `"Namespace":"lambda-function-metrics","Unit":"Count",`},
		"namespace missing":         {`"Namespace":"lambda-function-metrics",`, ``},
		"dimension not a string":    {`"functionVersion":"$LATEST"`, `"functionVersion":7`},
		"dimension missing":         {`"functionVersion":"$LATEST",`, ``},
		"dimensions not nested":     {`[["functionVersion"],[]]`, `["functionVersion"]`},
		"no metrics":                {`"Metrics":[{"Name":"time","Unit":"Milliseconds","StorageResolution":60},{"Name":"hits"}]`, `"Metrics":[]`},
		"timestamp missing":         {`"Timestamp":1574109732004,`, ``},
		"timestamp a string":        {`"Timestamp":1574109732004`, `"Timestamp":"1574109732004"`},
		"no _aws":                   {`"_aws"`, `"aws"`},
		"trailing data":             {`"requestId":"989ffbf8"}`, `"requestId":"989ffbf8"} x`},
		"two lines":                 {`"requestId":"989ffbf8"}`, `"requestId":"989ffbf8"}` + "\n{}"},
	}
	for name, tt := range tests {
		if !strings.Contains(valid, tt.from) {
			t.Fatalf("%s: %q is not in the valid document", name, tt.from)
		}
		doc := strings.Replace(valid, tt.from, tt.to, 1)
		if _, _, err := Parse([]byte(doc)); err == nil {
			t.Errorf("%s: Parse accepted %s", name, doc)
		}
	}
}
