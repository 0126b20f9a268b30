package catalog

import (
	"reflect"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/netguard"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

const client = "0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b"

func body(act string, fields ...any) map[string]any {
	b := map[string]any{"action": act, "client_id": client}
	for i := 0; i+1 < len(fields); i += 2 {
		b[fields[i].(string)] = fields[i+1]
	}
	return b
}

// TestParseRequestInput checks what a valid request becomes: the values
// the handlers read, in their canonical forms, with the defaults of the
// fields left out.
func TestParseRequestInput(t *testing.T) {
	strict := &netguard.Guard{}
	for _, tc := range []struct {
		body map[string]any
		want action.Input
	}{
		// Optional fields that are empty, blank or null are absent: their
		// defaults apply.
		{body("generate_blog", "keyword", "rye", "category_id", " ", "tone", ""),
			action.Input{"keyword": "rye", "tone": "professional"}},
		{body("generate_topical_map", "topic", "baking", "depth", nil), action.Input{"topic": "baking", "depth": 2.0}},
		{body("run_grid_search", "keyword", "bakery", "lat", -85.0, "lng", 180.0, "radius", 0.5),
			action.Input{"keyword": "bakery", "lat": -85.0, "lng": 180.0, "radius": 0.5}},
		// A UUID is kept in its canonical lower case.
		{body("deploy_blog", "post_id", "0190B7A8-3C1E-7D2F-9A4B-5C6D7E8F9A0B"), action.Input{"post_id": "0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b"}},
		// A multi-line field takes line breaks, tabs and other control
		// characters; only NUL is refused.
		{body("score_call", "transcript", "Agent:\tHello\r\nCaller: a quote\x0c please"),
			action.Input{"transcript": "Agent:\tHello\r\nCaller: a quote\x0c please"}},
		{body("run_llm_visibility", "prompt", "best bakery?", "brand_name", "Crust", "competitors", []any{"Loaf Lab", "Rye & Co"}),
			action.Input{"prompt": "best bakery?", "brand_name": "Crust", "competitors": []string{"Loaf Lab", "Rye & Co"}}},
		{body("run_llm_visibility", "prompt", "best bakery?", "brand_name", "Crust", "competitors", []any{}),
			action.Input{"prompt": "best bakery?", "brand_name": "Crust", "competitors": []string{}}},
		// URLs the service does not fetch may name any host.
		{body("index_url", "url", "http://127.0.0.1/page"), action.Input{"url": "http://127.0.0.1/page"}},
		{body("send_prospect_email", "to", "Zoe.B+seo@client.example", "subject", "Hello", "html", "<p>Hi</p>\n"),
			action.Input{"to": "Zoe.B+seo@client.example", "subject": "Hello", "html": "<p>Hi</p>\n"}},
	} {
		req, err := ParseRequest(tc.body, strict)
		if err != nil {
			t.Errorf("ParseRequest(%v) = %v", tc.body, err)
			continue
		}
		if req.Action.Name != tc.body["action"] || req.ClientID != client || !reflect.DeepEqual(req.Input, tc.want) {
			t.Errorf("ParseRequest(%v) = %s %s %#v, want %#v", tc.body, req.Action.Name, req.ClientID, req.Input, tc.want)
		}
	}
}

// TestFetchedURLsFollowTheGuard checks that the request-time check of a
// URL an action fetches is the fetch's own address rule (whose every form
// netguard's tests hold), as the deployment configures it: strict, private
// addresses are refused; allowed (local testing), they pass, but a numeric
// host in a form resolvers disagree on is still refused, as the fetch
// refuses it.
func TestFetchedURLsFollowTheGuard(t *testing.T) {
	strict, allowing := &netguard.Guard{}, &netguard.Guard{AllowPrivate: true}
	for _, tc := range []struct {
		url           string
		strict, allow string // what the 400 says; "" when accepted
	}{
		{"https://bakery.example/classes", "", ""},
		{"http://[::127.0.0.1]:8080/", "host ::127.0.0.1 is a private network address", ""},
		{"http://2130706433/", "host 2130706433 is a private network address", "write it as 127.0.0.1"},
		{"ftp://bakery.example/", `scheme "ftp" is not allowed`, `scheme "ftp" is not allowed`},
	} {
		for _, g := range []struct {
			guard *netguard.Guard
			say   string
			where string
		}{{strict, tc.strict, " on a public address; "}, {allowing, tc.allow, "; "}} {
			_, err := ParseRequest(body("optimize_page", "url", tc.url), g.guard)
			switch {
			case g.say == "" && err != nil:
				t.Errorf("AllowPrivate %v: %s refused: %v", g.guard.AllowPrivate, tc.url, err)
			case g.say == "":
			case apperr.KindOf(err) != apperr.KindInvalid || !strings.Contains(err.Error(), g.say) ||
				!strings.HasPrefix(err.Error(), "optimize_page.url must be an absolute http or https URL"+g.where):
				t.Errorf("AllowPrivate %v: %s answered %v, want a 400 saying %q", g.guard.AllowPrivate, tc.url, err, g.say)
			}
		}
	}
}
