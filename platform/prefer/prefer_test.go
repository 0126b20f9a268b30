package prefer

import (
	"reflect"
	"strings"
	"testing"
)

func pref(name, value string, params ...string) Preference {
	p := Preference{Name: name, Value: value}
	for i := 0; i+1 < len(params); i += 2 {
		p.Params = append(p.Params, Param{params[i], params[i+1]})
	}
	return p
}

// TestParse reads RFC 7240's own examples (sections 2 and 4) and the cases
// it states in words, and the header that ran synchronously before this
// parser (respond-async with a parameter).
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		headers []string
		want    Preferences
	}{
		{"one preference", []string{"respond-async"}, Preferences{pref("respond-async", "")}},
		{"a preference with a parameter (it ran synchronously before)", []string{"respond-async;foo=bar"},
			Preferences{pref("respond-async", "", "foo", "bar")}},
		{"RFC 7240 section 2: a value and a quoted parameter", []string{`return=minimal; foo="some parameter"`},
			Preferences{pref("return", "minimal", "foo", "some parameter")}},
		{"RFC 7240 section 2: two in one header", []string{"respond-async, wait=100"},
			Preferences{pref("respond-async", ""), pref("wait", "100")}},
		{"RFC 7240 section 2: the same in two headers", []string{"respond-async", "wait=100"},
			Preferences{pref("respond-async", ""), pref("wait", "100")}},
		{"RFC 7240 section 2: three, handling first", []string{"handling=lenient, wait=100, respond-async"},
			Preferences{pref("handling", "lenient"), pref("wait", "100"), pref("respond-async", "")}},
		{"RFC 7240 section 2: empty values are no values (1)", []string{"foo; bar"}, Preferences{pref("foo", "", "bar", "")}},
		{"RFC 7240 section 2: empty values are no values (2)", []string{`foo; bar=""`}, Preferences{pref("foo", "", "bar", "")}},
		{"RFC 7240 section 2: empty values are no values (3)", []string{`foo=""; bar`}, Preferences{pref("foo", "", "bar", "")}},
		{"RFC 7240 section 4.1: respond-async, wait", []string{"respond-async, wait=10"},
			Preferences{pref("respond-async", ""), pref("wait", "10")}},
		{"RFC 7240 section 4.2: return=representation", []string{"return=representation"}, Preferences{pref("return", "representation")}},
		{"RFC 7240 section 4.4: handling=strict", []string{"handling=strict"}, Preferences{pref("handling", "strict")}},
		{"names in any case", []string{"Respond-Async, WAIT=5"}, Preferences{pref("respond-async", ""), pref("wait", "5")}},
		{"white space around = and ;", []string{"  wait = 5 ;  x = \"y\" ,respond-async  "},
			Preferences{pref("wait", "5", "x", "y"), pref("respond-async", "")}},
		{"a quoted value with a comma and an escaped quote", []string{`note="a, \"b\"", wait=3`},
			Preferences{pref("note", `a, "b"`), pref("wait", "3")}},
		{"the first occurrence wins, in a header", []string{"wait=5, wait=60"}, Preferences{pref("wait", "5")}},
		{"the first occurrence wins, across headers", []string{"WAIT=5", "wait=60, respond-async"},
			Preferences{pref("wait", "5"), pref("respond-async", "")}},
		{"a quoted wait is the same wait", []string{`wait="7"`}, Preferences{pref("wait", "7")}},
		{"empty list elements", []string{", ,respond-async,,"}, Preferences{pref("respond-async", "")}},
		{"an element off the grammar is skipped", []string{"=5, wait=2"}, Preferences{pref("wait", "2")}},
		{"a value that is no word is skipped, the rest kept", []string{"wait=, respond-async"}, Preferences{pref("respond-async", "")}},
		{"an unclosed quote ends the header", []string{`respond-async, x="a, wait=2`}, Preferences{pref("respond-async", "")}},
		{"two tokens without a separator are skipped", []string{"respond async, wait=1"}, Preferences{pref("wait", "1")}},
		{"nothing", nil, nil},
	} {
		if got := Parse(tc.headers); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Parse(%q) = %#v\nwant %#v", tc.name, tc.headers, got, tc.want)
		}
	}
}

func TestGet(t *testing.T) {
	ps := Parse([]string{"respond-async; foo=bar, wait=10"})
	if p, ok := ps.Get("WAIT"); !ok || p.Value != "10" {
		t.Errorf("Get(WAIT) = %v, %v; want wait=10", p, ok)
	}
	if !ps.Has("respond-async") || ps.Has("return") {
		t.Errorf("Has: respond-async %v, return %v; want true, false", ps.Has("respond-async"), ps.Has("return"))
	}
}

func TestString(t *testing.T) {
	for p, want := range map[string]string{
		"wait=10":                      "wait=10",
		"respond-async ; foo = bar":    "respond-async; foo=bar",
		`return=minimal; foo="a \" b"`: `return=minimal; foo="a \" b"`,
		`x="a,b";y`:                    `x="a,b"; y`,
	} {
		if got := Parse([]string{p})[0].String(); got != want {
			t.Errorf("Parse(%q)[0].String() = %q; want %q", p, got, want)
		}
	}
}

// FuzzParse: any header parses without panicking into preferences with
// token names in lower case, each once, and writing them back and parsing
// that gives the same preferences.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"respond-async", "respond-async;foo=bar", "respond-async, wait=100", `return=minimal; foo="some parameter"`,
		`foo; bar=""`, `note="a, \"b\"", wait=3`, `x="unclosed`, "=5,,;", "wait=999999999999999999999", "wait=-1", "wait=1.5", "wait=\t10\t",
		"respond-async\x00", "résumé=1"} {
		f.Add(s, "wait=5")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ps := Parse([]string{a, b})
		seen := map[string]bool{}
		var again []string
		for _, p := range ps {
			if p.Name == "" || p.Name != strings.ToLower(p.Name) || strings.IndexFunc(p.Name, func(r rune) bool { return r > 0x7f || !isTchar(byte(r)) }) >= 0 {
				t.Fatalf("Parse(%q, %q): name %q is not a token in lower case", a, b, p.Name)
			}
			if seen[p.Name] {
				t.Fatalf("Parse(%q, %q): %q twice", a, b, p.Name)
			}
			seen[p.Name] = true
			again = append(again, p.String())
		}
		if back := Parse([]string{strings.Join(again, ", ")}); !reflect.DeepEqual(back, ps) {
			t.Fatalf("Parse(%q, %q) = %#v, written back as %q, parses as %#v", a, b, ps, strings.Join(again, ", "), back)
		}
	})
}
