package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	atriumcli "github.com/atrium-hq/atrium/cmd/atrium/internal/cli"
	"github.com/atrium-hq/atrium/gateway/openapi"
)

// numberWords are the counts prose spells out.
var numberWords = map[string]int{"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
	"nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
	"seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20}

func proseNumber(s string) int {
	if n, ok := numberWords[strings.ToLower(s)]; ok {
		return n
	}
	n, _ := strconv.Atoi(s)
	return n
}

// TestProseCounts: the counts the README, docs/*.md, the chart's
// descriptions and atrium's usage text state are the code's: the services
// (a module each under services/), the chart's components (the gateway
// and each service, a Deployment each) and the actions of the catalog.
// Prose names subsets too ("the two services that write files"), so a
// count of services from three up, or of Deployments or components from
// four up, is read as a count of all of them; an action count is checked
// where it says "N actions" in the README and architecture.md (elsewhere
// "five actions run" counts runs), and in "a catalog of N actions"
// anywhere.
func TestProseCounts(t *testing.T) {
	mods, err := filepath.Glob("../../services/*/go.mod")
	if err != nil || len(mods) == 0 {
		t.Fatalf("no services found: %v", err)
	}
	services := len(mods)
	components := services + 1 // and the gateway
	actions, err := openapi.Actions()
	if err != nil {
		t.Fatal(err)
	}
	// The chart installs a Deployment per component.
	chart, err := os.ReadFile("../../deploy/helm/atrium/templates/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`range \$component := list((?: "[a-z]+")+)`).FindSubmatch(chart); m == nil || len(strings.Fields(string(m[1]))) != components {
		t.Errorf("the chart's Deployments are %q; want the gateway and %d services", m, services)
	}

	texts := map[string]string{}
	files, _ := filepath.Glob("../../docs/*.md")
	files = append(files, "../../README.md", "../../deploy/helm/atrium/Chart.yaml", "../../deploy/helm/atrium/values.yaml")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts[strings.TrimPrefix(f, "../../")] = string(b)
	}
	var usage bytes.Buffer
	env := atriumcli.Env{Stdout: &usage, Stderr: &usage, Lookup: func(string) (string, bool) { return "", false }}
	if err := run(t.Context(), []string{"help"}, env); err != nil {
		t.Fatal(err)
	}
	texts["atrium help"] = usage.String()

	word := `\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|\d+)`
	checks := []struct {
		what  string
		re    *regexp.Regexp
		min   int
		want  int
		where func(name string) bool
	}{
		{"services", regexp.MustCompile(`(?i)` + word + `\s+(?:grpc\s+)?services\b`), 3, services, nil},
		{"Deployments or components", regexp.MustCompile(`(?i)` + word + `\s+(?:deployments|components)\b`), 4, components, nil},
		{"actions", regexp.MustCompile(`(?i)` + word + `\s+actions\b`), 1, len(actions),
			func(name string) bool { return name == "README.md" || name == "docs/architecture.md" }},
		{"actions of the catalog", regexp.MustCompile(`(?i)catalog of\s+` + word + `\s+actions\b`), 1, len(actions), nil},
	}
	for name, text := range texts {
		for _, c := range checks {
			if c.where != nil && !c.where(name) {
				continue
			}
			for _, m := range c.re.FindAllStringSubmatch(text, -1) {
				if n := proseNumber(m[1]); n >= c.min && n != c.want {
					t.Errorf("%s says %q: there are %d %s", name, strings.Join(strings.Fields(m[0]), " "), c.want, c.what)
				}
			}
		}
	}
}
