package deploytest_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ocyless/ocyless/internal/deploygen"
	"github.com/ocyless/ocyless/shared/deploytest"
	"github.com/ocyless/ocyless/shared/httpapi"
)

// albRule is one listener rule of the internal load balancer.
type albRule struct {
	id, method, pattern, target string
	priority                    int
}

// albRules reads the template's listener rules, in priority order.
func albRules(t *testing.T, tmpl map[string]any) []albRule {
	t.Helper()
	var rules []albRule
	for id, res := range asMap(tmpl["Resources"]) {
		if dig(res, "Type") != "AWS::ElasticLoadBalancingV2::ListenerRule" {
			continue
		}
		if dig(res, "Condition") != "UseAlb" || dig(res, "Properties", "ListenerArn", "Ref") != "QueueAlbListener" {
			t.Errorf("%s: not a UseAlb rule of QueueAlbListener", id)
		}
		r := albRule{id: id}
		p, err := fmt.Sscan(fmt.Sprint(dig(res, "Properties", "Priority")), &r.priority)
		if err != nil || p != 1 {
			t.Fatalf("%s: priority %v", id, dig(res, "Properties", "Priority"))
		}
		for _, c := range dig(res, "Properties", "Conditions").([]any) {
			switch dig(c, "Field") {
			case "http-request-method":
				r.method = anyStrings(dig(c, "HttpRequestMethodConfig", "Values"))[0]
			case "path-pattern":
				r.pattern = anyStrings(dig(c, "PathPatternConfig", "Values"))[0]
			}
		}
		actions := dig(res, "Properties", "Actions").([]any)
		r.target = fmt.Sprint(dig(actions[0], "TargetGroupArn", "Ref"))
		rules = append(rules, r)
	}
	slices.SortFunc(rules, func(a, b albRule) int { return a.priority - b.priority })
	return rules
}

// albMatch is an ALB path pattern's match: '*' any run of characters
// ('/' included), '?' one character, case-sensitive.
func albMatch(pattern, p string) bool {
	if pattern == "" {
		return p == ""
	}
	switch pattern[0] {
	case '*':
		for i := 0; i <= len(p); i++ {
			if albMatch(pattern[1:], p[i:]) {
				return true
			}
		}
		return false
	case '?':
		return p != "" && albMatch(pattern[1:], p[1:])
	}
	return p != "" && p[0] == pattern[0] && albMatch(pattern[1:], p[1:])
}

// TestAlbRouting: the load balancer sends each route's sample request
// (events/alb/) to that route's function, the first matching rule by
// priority deciding as the load balancer does; priorities are distinct;
// a path no rule routes gets the listener's own 404.
func TestAlbRouting(t *testing.T) {
	t.Parallel()
	tmpl := loadTemplate(t)
	rules := albRules(t, tmpl)
	in, err := deploygen.RepoInput(deploytest.RepoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != len(in.Routes) {
		t.Fatalf("%d listener rules, want one per route (%d)", len(rules), len(in.Routes))
	}
	for i := 1; i < len(rules); i++ {
		if rules[i].priority == rules[i-1].priority {
			t.Errorf("%s and %s share priority %d", rules[i-1].id, rules[i].id, rules[i].priority)
		}
	}
	route := func(method, p string) string {
		for _, r := range rules {
			if r.method == method && albMatch(r.pattern, p) {
				return r.target
			}
		}
		return ""
	}
	for _, rt := range in.Routes {
		data, err := os.ReadFile(filepath.Join(deploytest.RepoRoot(t), deploygen.AlbEventPath(rt.Name)))
		if err != nil {
			t.Fatal(err)
		}
		var ev struct{ HTTPMethod, Path string }
		if err := json.Unmarshal(data, &ev); err != nil {
			t.Fatal(err)
		}
		want := httpapi.LogicalID(rt.Name) + "AlbTargetGroup"
		if got := route(ev.HTTPMethod, ev.Path); got != want {
			t.Errorf("%s %s goes to %q, want %s", ev.HTTPMethod, ev.Path, got, want)
		}
		// Also with other values in the wildcards, slashes included.
		other := strings.NewReplacer("{name}", "a.b-c", "{id}", "12", "{group}", "x_y", "{wname}", "w").Replace(rt.Pattern)
		if !strings.Contains(other, "{") {
			if got := route(rt.Method, other); got != want {
				t.Errorf("%s %s goes to %q, want %s", rt.Method, other, got, want)
			}
		}
	}
	for _, req := range [][2]string{{"GET", "/"}, {"GET", "/nope"}, {"POST", "/queue"}, {"DELETE", "/info"}} {
		if got := route(req[0], req[1]); got != "" {
			t.Errorf("%s %s goes to %s, want the listener's 404", req[0], req[1], got)
		}
	}
	def := dig(tmpl, "Resources", "QueueAlbListener", "Properties", "DefaultActions").([]any)[0]
	if dig(def, "Type") != "fixed-response" || fmt.Sprint(dig(def, "FixedResponseConfig", "StatusCode")) != "404" {
		t.Errorf("listener default action %v, want a fixed 404", def)
	}
	for id, res := range asMap(tmpl["Resources"]) {
		if dig(res, "Type") == "AWS::ElasticLoadBalancingV2::TargetGroup" {
			attrs, _ := json.Marshal(dig(res, "Properties", "TargetGroupAttributes"))
			if !strings.Contains(string(attrs), `"lambda.multi_value_headers.enabled"`) || dig(res, "Properties", "HealthCheckEnabled") != false {
				t.Errorf("%s: want multi-value headers on and no health check (it would invoke the function)", id)
			}
		}
	}
}
