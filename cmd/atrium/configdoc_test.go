package main

// docs/configuration.md has one table per command, which this test checks
// against the command's own -h output, so that the document cannot drift
// from the binaries: every flag, its variable and its default.
//
// After adding or changing a flag, regenerate the tables (existing
// Meaning cells are kept; a new flag's usage text becomes its meaning):
//
//	go test ./cmd/atrium -run TestConfigurationDocMatchesFlags -update-config-doc

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var updateConfigDoc = flag.Bool("update-config-doc", false, "rewrite docs/configuration.md's flag tables from the binaries' -h output")

const configDoc = "../../docs/configuration.md"

// documentedCommands are the commands with a flag table in
// docs/configuration.md, under a heading naming them in backquotes.
var documentedCommands = []struct {
	name string   // as in the heading: atrium serve, atrium-gateway
	argv []string // binary, then arguments before -h
}{
	{"atrium serve", []string{"atrium", "serve"}},
	{"atrium migrate", []string{"atrium", "migrate"}},
	{"atrium load-rows", []string{"atrium", "load-rows"}},
	{"atrium principal", []string{"atrium", "principal"}},
	{"atrium mcp", []string{"atrium", "mcp"}},
	{"atrium-gateway", []string{"atrium-gateway"}},
	{"atrium-collections", []string{"atrium-collections"}},
	{"atrium-crm", []string{"atrium-crm"}},
	{"atrium-data", []string{"atrium-data"}},
	{"atrium-actions", []string{"atrium-actions"}},
	{"atrium-webhooks", []string{"atrium-webhooks"}},
	{"atrium-audit", []string{"atrium-audit"}},
}

// flagHelp is one flag as -h describes it.
type flagHelp struct {
	name, env, usage, def string
}

var (
	helpFlagRE    = regexp.MustCompile(`^  --([a-z0-9-]+)  \((ATRIUM_[A-Z0-9_]+)\)$`)
	helpDefaultRE = regexp.MustCompile(`^(.*) \(default ("(?:[^"\\]|\\.)*")\)$`)
)

// helpFlags runs the command with -h and parses the flags it lists, but
// --version, which the document describes once for every command.
func helpFlags(t *testing.T, bins string, argv []string) []flagHelp {
	t.Helper()
	cmd := exec.Command(filepath.Join(bins, argv[0]), append(argv[1:], "-h")...)
	// Nothing of the environment changes the defaults -h shows; GORACE
	// keeps a -race binary from sleeping a second at exit.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GORACE=" + os.Getenv("GORACE")}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s -h: %v\n%s", strings.Join(argv, " "), err, out)
	}
	// --version is never read from the environment, so -h must not name a
	// variable for it.
	if strings.Contains(string(out), "ATRIUM_VERSION") {
		t.Errorf("%s -h names ATRIUM_VERSION, which is never read:\n%s", strings.Join(argv, " "), out)
	}
	var flags []flagHelp
	lines := strings.Split(string(out), "\n")
	for i, line := range lines {
		m := helpFlagRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		f := flagHelp{name: m[1], env: m[2]}
		if i+1 < len(lines) {
			f.usage = strings.TrimSpace(lines[i+1])
			if d := helpDefaultRE.FindStringSubmatch(f.usage); d != nil {
				f.usage = d[1]
				if f.def, err = strconv.Unquote(d[2]); err != nil {
					t.Fatalf("%s -h: default of --%s: %v", argv[0], f.name, err)
				}
			}
		}
		if f.name != "version" {
			flags = append(flags, f)
		}
	}
	if len(flags) == 0 {
		t.Fatalf("%s -h listed no flags:\n%s", strings.Join(argv, " "), out)
	}
	return flags
}

// docTable is the flag table under a command's heading: lines [start, end)
// of the document, and its rows by flag name.
type docTable struct {
	start, end int
	rows       map[string][]string // flag name → cells (Flag, Variable, Default, Meaning)
	order      []string
}

var flagCellRE = regexp.MustCompile("`--([a-z0-9-]+)`")

// findTable finds the table under the heading naming command; start and
// end are -1 when the heading is missing, equal when it has no table.
func findTable(lines []string, command string) docTable {
	tbl := docTable{start: -1, end: -1, rows: map[string][]string{}}
	heading := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "#") && strings.Contains(l, "# `"+command+"`") {
			heading = i
			break
		}
	}
	if heading < 0 {
		return tbl
	}
	tbl.start, tbl.end = heading+1, heading+1
	for i := heading + 1; i < len(lines) && !strings.HasPrefix(lines[i], "#"); i++ {
		if !strings.HasPrefix(lines[i], "|") {
			if tbl.end > tbl.start {
				break
			}
			tbl.start, tbl.end = i+1, i+1
			continue
		}
		tbl.end = i + 1
		cells := strings.Split(strings.Trim(lines[i], "|"), " | ")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		for _, m := range flagCellRE.FindAllStringSubmatch(cells[0], -1) {
			tbl.rows[m[1]] = cells
			tbl.order = append(tbl.order, m[1])
		}
	}
	return tbl
}

// docRow is the table row the document should have for f; meaning and
// an empty default's wording are kept from the current row, if any.
func docRow(f flagHelp, current []string) string {
	meaning, def := f.usage, "empty"
	if n := len(current); n >= 2 {
		meaning = current[n-1]
		if n >= 3 && !strings.HasPrefix(current[n-2], "`") {
			def = current[n-2]
		}
	}
	if f.def != "" {
		def = "`" + f.def + "`"
	}
	return fmt.Sprintf("| `--%s` | `%s` | %s | %s |", f.name, f.env, def, meaning)
}

func TestConfigurationDocMatchesFlags(t *testing.T) {
	bins := binaries(t)
	raw, err := os.ReadFile(configDoc)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	for _, cmd := range documentedCommands {
		flags := helpFlags(t, bins, cmd.argv)
		tbl := findTable(lines, cmd.name)
		if tbl.start < 0 {
			t.Errorf("docs/configuration.md has no heading naming `%s`, above the table of its flags", cmd.name)
			continue
		}
		if *updateConfigDoc {
			table := []string{"| Flag | Variable | Default | Meaning |", "|---|---|---|---|"}
			for _, f := range flags {
				table = append(table, docRow(f, tbl.rows[f.name]))
			}
			if tbl.start == tbl.end {
				table = append(table, "")
			}
			lines = slices.Concat(lines[:tbl.start], table, lines[tbl.end:])
			continue
		}
		var names []string
		for _, f := range flags {
			names = append(names, f.name)
			row, ok := tbl.rows[f.name]
			want := docRow(f, row)
			switch {
			case !ok:
				t.Errorf("`%s` has --%s, which docs/configuration.md's table for it lacks; add:\n%s", cmd.name, f.name, want)
			case len(row) != 4:
				t.Errorf("docs/configuration.md, `%s`: the row of --%s has %d cells, want 4 (Flag, Variable, Default, Meaning), one flag per row", cmd.name, f.name, len(row))
			case strings.Trim(row[1], "`") != f.env:
				t.Errorf("docs/configuration.md, `%s`: --%s's variable is %s, want `%s`", cmd.name, f.name, row[1], f.env)
			case f.def != "" && row[2] != "`"+f.def+"`":
				t.Errorf("docs/configuration.md, `%s`: --%s's default is %s; -h says `%s`", cmd.name, f.name, row[2], f.def)
			case f.def == "" && strings.HasPrefix(row[2], "`"):
				t.Errorf("docs/configuration.md, `%s`: --%s's default is %s; -h shows none, so say what empty means (empty, required, generated...)", cmd.name, f.name, row[2])
			}
		}
		for _, name := range tbl.order {
			if !slices.Contains(names, name) {
				t.Errorf("docs/configuration.md documents --%s for `%s`, whose -h does not list it", name, cmd.name)
			}
		}
	}
	if *updateConfigDoc {
		if err := os.WriteFile(configDoc, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("rewrote the flag tables of docs/configuration.md; review the diff")
	}
}
