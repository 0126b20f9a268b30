package value

import (
	"strings"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		rule     Rule
		ok, bad  []any
		whatKind string
	}{
		{Rule{Kind: String, Max: 3}, []any{"", "abc", "日本語", "a\tb", "a\nb", "\x07"},
			[]any{"abcd", "a\x00b", 1.0, true, nil, []any{}}, "any text"},
		{Rule{Kind: String, Max: 5, Lines: MultiLine}, []any{"a\tb", "a\r\nb", "é"},
			[]any{"a\x00", "a\x07", "a\x7f", "a\u0085b", "a\u009bb", "abcdef"}, "multi-line"},
		{Rule{Kind: String, Lines: OneLine}, []any{"Acme", "日本", "a b"},
			[]any{"a\tb", "a\nb", "a\rb", "a\x00b", "a\u0085b"}, "one line"},
		{Rule{Kind: Integer}, []any{0.0, -3.0, 9007199254740992.0, -9007199254740992.0},
			[]any{1.5, 9007199254740994.0, "2", true}, "integer"},
		{Rule{Kind: Number}, []any{0.0, -1.5, 1e300}, []any{"1", true, nil}, "number"},
		{Rule{Kind: Integer, AtLeast: bound(1), AtMost: bound(3)}, []any{1.0, 2.0, 3.0}, []any{0.0, 4.0, 2.5, "2"}, "bounded integer"},
		{Rule{Kind: Number, AtLeast: bound(-85), AtMost: bound(85)}, []any{-85.0, 0.0, 84.99, 85.0}, []any{-85.01, 91.0, "40.7"}, "bounded number"},
		{Rule{Kind: Number, AtLeast: bound(0.5)}, []any{0.5, 1e300}, []any{0.49, -1.0}, "number with a floor"},
		{Rule{Kind: Integer, AtMost: bound(1e300)}, []any{9007199254740992.0}, []any{9007199254740994.0}, "integer bounded beyond 2^53"},
		{Rule{Kind: Boolean}, []any{true, false}, []any{"true", 0.0}, "boolean"},
		{Rule{Kind: Date}, []any{"2026-02-28", "2024-02-29", "9999-12-31"},
			[]any{"2026-02-29", "2026-2-1", "0000-01-01", "2026-02-28T00:00:00Z", 20260228.0}, "date"},
		{Rule{Kind: Timestamp}, []any{"2026-01-02T15:04:05Z", "2026-01-02T15:04:05.123456789+01:00"},
			[]any{"2026-01-02 15:04:05", "2026-01-02", "2026-01-02T15:04:05", 1.0}, "timestamp"},
		{Rule{Kind: URL}, []any{"https://a.example/x?y=1", "http://a.example", "HTTP://a.example/", "https://127.0.0.1:8080/", "https://a.example/" + strings.Repeat("x", 2048-19)},
			[]any{"ftp://a.example", "a.example", "https://", "http://:80/", "//a.example", "https://u:p@a.example/", "https://a.example/a b",
				"https://a.example/\x00", "https://a.example/" + strings.Repeat("x", 2048-17), "mailto:ana@example.com"}, "url"},
		{Rule{Kind: Email}, []any{"ana@example.com", "ana.b+tag@mail.example.co.uk", "ANA@EXAMPLE.COM"},
			[]any{"Ana <ana@example.com>", "<ana@example.com>", "ana", "ana@", "@example.com", "ana@localhost", "bob@[127.0.0.1]",
				"bob@127.0.0.1", "josé@example.com", "ana@exämple.com", "ana@example.com ", "a b@example.com", "ana@-x.example", "a..b@example.com", ".a@example.com", `"a b"@example.com`, "a@b@example.com",
				strings.Repeat("a", 250) + "@x.io"}, "email"},
		{Rule{Kind: UUID}, []any{"0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b", "0190B7A8-3C1E-7D2F-9A4B-5C6D7E8F9A0B"},
			[]any{"0190b7a83c1e7d2f9a4b5c6d7e8f9a0b", "{0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b}", "urn:uuid:0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b",
				"0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0g", "0190b7a8+3c1e-7d2f-9a4b-5c6d7e8f9a0b", 1.0}, "uuid"},
		{Rule{Kind: JSON, Max: 20}, []any{map[string]any{"a": []any{1.0, "x"}}, "s", 1.0, false},
			[]any{nil, map[string]any{"a": "\x00"}, map[string]any{"\x00": 1.0}, []any{[]any{"\x00"}}, strings.Repeat("x", 20)}, "json"},
	} {
		for _, v := range tc.ok {
			if _, ok := tc.rule.Check(v); !ok {
				t.Errorf("%s refuses %.80q", tc.whatKind, v)
			}
		}
		for _, v := range tc.bad {
			if _, ok := tc.rule.Check(v); ok {
				t.Errorf("%s accepts %.80q", tc.whatKind, v)
			}
		}
	}
}

func bound(n float64) *float64 { return &n }

func TestCanonicalForms(t *testing.T) {
	if v, _ := (Rule{Kind: UUID}).Check("0190B7A8-3C1E-7D2F-9A4B-5C6D7E8F9A0B"); v.Str != "0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b" {
		t.Errorf("UUID canonical form %q, want lower case", v.Str)
	}
	v, _ := Rule{Kind: Timestamp}.Check("2026-01-02T15:04:05.5+02:00")
	if want := time.Date(2026, 1, 2, 13, 4, 5, 500_000_000, time.UTC); !v.Time.Equal(want) || v.Time.Location() != time.UTC {
		t.Errorf("timestamp %v, want %v in UTC", v.Time, want)
	}
	if v, _ := (Rule{Kind: JSON}).Check(map[string]any{"b": "<&>", "a": 1.0}); string(v.JSON) != `{"a":1,"b":"<&>"}` {
		t.Errorf("JSON encoded as %s", v.JSON)
	}
}

func TestMissing(t *testing.T) {
	for _, v := range []any{nil, "", " ", "\t\n"} {
		if !Missing(v) {
			t.Errorf("Missing(%q) = false: a required field would take it", v)
		}
	}
	for _, v := range []any{"x", 0.0, false, []any{}, map[string]any{}} {
		if Missing(v) {
			t.Errorf("Missing(%#v) = true", v)
		}
	}
}

func TestParseQuery(t *testing.T) {
	for _, s := range []string{"0", "-1", "1.5", "1e3", "2E-2", "-0.0"} {
		if _, ok := ParseQuery(Number, s); !ok {
			t.Errorf("number %q refused", s)
		}
	}
	for _, s := range []string{"", "NaN", "Inf", "+1", "01", "0x10", "1_000", " 1", "1.", ".5", "1e", "1e400"} {
		if _, ok := ParseQuery(Number, s); ok {
			t.Errorf("number %q accepted", s)
		}
	}
	if v, err := (Rule{Kind: Integer}).ParseFilter("views", "10"); err != nil || v.Num != 10 {
		t.Errorf("views=10: %v %v", v, err)
	}
	if _, err := (Rule{Kind: Integer}).ParseFilter("views", "1.5"); err == nil {
		t.Error("an integer filter took 1.5")
	}
	if _, err := (Rule{Kind: String, Max: 100}).ParseFilter("status", "a\x00b"); err == nil {
		t.Error("a string filter took a NUL, which PostgreSQL cannot compare")
	}
	if _, ok := ParseQuery(JSON, "{}"); ok {
		t.Error("a JSON value was read from a query")
	}
}

func TestDomainName(t *testing.T) {
	for _, s := range []string{"example.com", "WWW.Example.COM", "a-b.c0.io", "xn--bcher-kva.example", "1.2.3.example"} {
		if !DomainName(s) {
			t.Errorf("DomainName(%q) = false", s)
		}
	}
	for _, s := range []string{"", "localhost", "-a.com", "a-.com", "a..com", "exa mple.com", strings.Repeat("a", 64) + ".com",
		"1.2.3.4", "2130706433", "a.b.", ".a.b", "a_b.com", "[::1]"} {
		if DomainName(s) {
			t.Errorf("DomainName(%q) = true", s)
		}
	}
}

// The checks run on every value of every write; these keep them from
// allocating.
func TestChecksDoNotAllocate(t *testing.T) {
	for _, tc := range []struct {
		rule Rule
		v    any
	}{
		{Rule{Kind: String, Max: 10_000, Lines: MultiLine}, "Sourdough at home, step by step"},
		{Rule{Kind: String, Max: 500_000}, "<p>Flour, water, salt and time.</p>"},
		{Rule{Kind: Integer}, 1200.0},
		{Rule{Kind: Date}, "2026-11-20"},
		{Rule{Kind: Timestamp}, "2026-11-20T08:00:00Z"},
		{Rule{Kind: UUID}, "0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b"},
		{Rule{Kind: Email}, "ana@example.com"},
	} {
		if n := testing.AllocsPerRun(100, func() { tc.rule.Check(tc.v) }); n > 0 {
			t.Errorf("%s check allocates %v times", tc.rule.Kind, n)
		}
	}
}

func TestLine(t *testing.T) {
	if v, err := Line("name", "  Acme  ", 10, false); err != nil || v != "Acme" {
		t.Errorf("Line trims: %q %v", v, err)
	}
	if v, err := Line("industry", " \t ", 10, true); err != nil || v != "" {
		t.Errorf("optional blank: %q %v", v, err)
	}
	if _, err := Line("name", strings.Repeat("é", 10), 10, false); err != nil {
		t.Errorf("10 two-byte characters are 10 characters: %v", err)
	}
	for _, bad := range []string{strings.Repeat("é", 11), "a\x00b", "a\nb", "a\xffb"} {
		if _, err := Line("name", bad, 10, false); err == nil {
			t.Errorf("Line took %q", bad)
		}
	}
}
