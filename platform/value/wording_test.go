package value

import (
	"os"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/platform/apperr"
)

// TestWording pins every message the package writes. The docs quote them
// (docs/http-api.md, collections.md, datasets.md, crm.md, actions.md): a
// change here is a change to what users read, and to those docs.
func TestWording(t *testing.T) {
	for _, tc := range []struct {
		err  error
		kind apperr.Kind
		want string
	}{
		{Rule{Kind: String, Max: 100_000}.Invalid("rows[0].keyword", 5.0), apperr.KindInvalid,
			`rows[0].keyword must be a string of at most 100,000 characters, without NUL characters (U+0000); got the number 5`},
		{Rule{Kind: String, Max: 2000}.Invalid("run_llm_visibility.prompt", "a\x00b"), apperr.KindInvalid,
			`run_llm_visibility.prompt must be a string of at most 2,000 characters, without NUL characters (U+0000); got "a\x00b"`},
		{Rule{Kind: String, Max: 10_000, Lines: MultiLine}.Invalid("data.title", "a\x07"), apperr.KindInvalid,
			`data.title must be a string of at most 10,000 characters, without control characters other than tab and line breaks; got "a\a"`},
		{Rule{Kind: String, Max: 200, Lines: OneLine}.Invalid("name", "a\nb"), apperr.KindInvalid,
			`name must be a string of at most 200 characters, on one line without control characters; got "a\nb"`},
		{Rule{Kind: String, Max: 200, Lines: OneLine}.Required("business_name"), apperr.KindInvalid,
			`business_name is required: a string of at most 200 characters, on one line without control characters`},
		{Rule{Kind: Integer}.Invalid("data.views", 1.5), apperr.KindInvalid,
			`data.views must be an integer (a whole number within ±2^53); got the number 1.5`},
		{Rule{Kind: Number}.Invalid("data.rating", "high"), apperr.KindInvalid,
			`data.rating must be a number; got "high"`},
		{Rule{Kind: Number, AtLeast: bound(-85), AtMost: bound(85)}.Invalid("run_grid_search.lat", 91.0), apperr.KindInvalid,
			`run_grid_search.lat must be a number between -85 and 85; got the number 91`},
		{Rule{Kind: Number, AtLeast: bound(0.5)}.Invalid("radius", "5"), apperr.KindInvalid,
			`radius must be a number of at least 0.5; got "5"`},
		{Rule{Kind: Integer, AtLeast: bound(1), AtMost: bound(3)}.Invalid("generate_topical_map.depth", 2.5), apperr.KindInvalid,
			`generate_topical_map.depth must be an integer between 1 and 3; got the number 2.5`},
		{Rule{Kind: Integer, AtMost: bound(10)}.Required("limit"), apperr.KindInvalid,
			`limit is required: an integer of at most 10`},
		{Rule{Kind: Boolean}.Invalid("data.featured", "yes"), apperr.KindInvalid,
			`data.featured must be true or false; got "yes"`},
		{Rule{Kind: Date}.Invalid("expected_close_date", "2026-02-30"), apperr.KindInvalid,
			`expected_close_date must be a date YYYY-MM-DD; got "2026-02-30"`},
		{Rule{Kind: Timestamp}.Invalid("rows[1].tracked_at", "yesterday"), apperr.KindInvalid,
			`rows[1].tracked_at must be an RFC 3339 timestamp such as 2026-01-02T15:04:05Z; got "yesterday"`},
		{Rule{Kind: URL}.Invalid("website_url", "ftp://a.example"), apperr.KindInvalid,
			`website_url must be an absolute http or https URL such as https://example.com/page (at most 2,048 characters, no spaces, no user name or password); got "ftp://a.example"`},
		{Rule{Kind: URL, Max: 100}.Invalid("data.link", nil), apperr.KindInvalid,
			`data.link must be an absolute http or https URL such as https://example.com/page (at most 100 characters, no spaces, no user name or password); got null`},
		{Rule{Kind: Email}.Invalid("email", "bob@[127.0.0.1]"), apperr.KindInvalid,
			`email must be an email address such as ana@example.com (ASCII, at a domain name, no display name, at most 254 characters); got "bob@[127.0.0.1]"`},
		{Rule{Kind: UUID}.Invalid("data.author", []any{}), apperr.KindInvalid,
			`data.author must be a UUID such as 0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b; got an array`},
		{Rule{Kind: JSON, Max: 200_000}.Invalid("rows[0].issues", map[string]any{}), apperr.KindInvalid,
			`rows[0].issues must be a JSON value of at most 200,000 bytes encoded, without NUL characters (U+0000); got an object`},
		{Rule{Kind: JSON}.Invalid("data.extra", true), apperr.KindInvalid,
			`data.extra must be any JSON value without NUL characters (U+0000); got true`},
		{Invalid("data.notes", "a short note", "x123456789x123456789x123456789x123456789x"), apperr.KindInvalid,
			`data.notes must be a short note; got a string of 41 characters`},
		{func() error { _, err := Rule{Kind: Integer}.ParseFilter("views", "ten"); return err }(), apperr.KindInvalid,
			`filter_value for views must be an integer (a whole number within ±2^53); got "ten"`},
		{func() error { _, err := Rule{Kind: Boolean}.ParseFilter("published", "yes"); return err }(), apperr.KindInvalid,
			`filter_value for published must be true or false; got "yes"`},
		{func() error { _, err := Line("name", "  ", 200, false); return err }(), apperr.KindInvalid,
			`name is required: a string of at most 200 characters, on one line without control characters`},
		{func() error { _, err := Line("title", "Q3\tplan", 200, false); return err }(), apperr.KindInvalid,
			`title must be a string of at most 200 characters, on one line without control characters; got "Q3\tplan"`},
		{func() error { _, err := PathID("agency", "nope"); return err }(), apperr.KindNotFound,
			`agency "nope" not found`},
		{func() error { _, err := BodyID("owner_member_id", "nope"); return err }(), apperr.KindInvalid,
			`owner_member_id must be a UUID such as 0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b; got "nope"`},
		{UTF8("filename", "caf\xe9.jpg"), apperr.KindInvalid,
			`filename must be text in UTF-8; its byte 4 (0xE9) is not part of a UTF-8 character`},
		{UTF8("alt", "ok \xe2\x82"), apperr.KindInvalid, // a character cut short
			`alt must be text in UTF-8; its byte 4 (0xE2) is not part of a UTF-8 character`},
	} {
		if tc.err == nil {
			t.Errorf("no error; want %q", tc.want)
			continue
		}
		if got := tc.err.Error(); got != tc.want || apperr.KindOf(tc.err) != tc.kind {
			t.Errorf("got  %q (kind %d)\nwant %q (kind %d)", got, apperr.KindOf(tc.err), tc.want, tc.kind)
		}
	}
}

func TestUTF8PassesText(t *testing.T) {
	for _, s := range []string{"", "hero.jpg", "café €5 😀", "\x00 NUL is UTF-8; other rules refuse it"} {
		if err := UTF8("f", s); err != nil {
			t.Errorf("UTF8(%q) = %v; want nil", s, err)
		}
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 2048: "2,048", 100_000: "100,000", 1_234_567: "1,234,567", -2048: "-2,048"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestDocsQuoteTheWording keeps docs/http-api.md's table of the kinds
// saying what the code says: each kind's description is quoted there as
// written.
func TestDocsQuoteTheWording(t *testing.T) {
	b, err := os.ReadFile("../../docs/http-api.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, r := range []Rule{{Kind: String, Max: 200, Lines: OneLine}, {Kind: Integer}, {Kind: Number}, {Kind: Boolean}, {Kind: Date},
		{Kind: Timestamp}, {Kind: URL}, {Kind: Email}, {Kind: UUID}, {Kind: JSON}} {
		if want := "| `" + r.Expected() + "` |"; !strings.Contains(doc, want) {
			t.Errorf("docs/http-api.md does not quote the %s kind as %q", r.Kind, want)
		}
	}
	for _, want := range []string{"`<field> must be <what it accepts>; got <what was", "`<field> is required: <what it accepts>`",
		"`filter_value for <field> must be <what it accepts>; got \"<value>\"`", "`agency \"nope\" not found`"} {
		if !strings.Contains(doc, want) {
			t.Errorf("docs/http-api.md no longer says %s", want)
		}
	}
}
