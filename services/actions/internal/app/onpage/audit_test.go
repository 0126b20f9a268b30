package onpage_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/services/actions/internal/app/onpage"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// goodPage passes every check, and every keyword check for "coffee beans".
func goodPage() *provider.Page {
	return &provider.Page{
		URL:             "https://shop.example.com/coffee-beans",
		FinalURL:        "https://shop.example.com/coffee-beans",
		StatusCode:      200,
		ContentType:     "text/html; charset=utf-8",
		Bytes:           48_000,
		Elapsed:         300 * time.Millisecond,
		Title:           "Coffee Beans: Fresh Roasts Delivered Weekly",
		MetaDescription: "Buy fresh coffee beans roasted every week by small roasters and delivered to your door in two days.",
		MetaRobots:      "index, follow",
		Canonical:       "https://shop.example.com/coffee-beans",
		Lang:            "en",
		Viewport:        true,
		Headings: []provider.Heading{
			{Level: 1, Text: "Fresh Coffee-Beans"}, {Level: 2, Text: "Origins"}, {Level: 3, Text: "Ethiopia"},
			{Level: 3, Text: "Colombia"}, {Level: 2, Text: "Roasts"},
		},
		Images: []provider.PageImage{{Src: "https://shop.example.com/a.png", Alt: "A sack of beans", HasAlt: true}},
		Links: []provider.Link{
			{Href: "https://shop.example.com/grinders", Text: "Grinders", Internal: true},
			{Href: "https://other.example/", Text: "Partner", NoFollow: true},
		},
		Text:      "Fresh coffee beans from small farms. " + strings.Repeat("word ", 320),
		WordCount: 326,
	}
}

func failedIDs(r onpage.AuditResult) []string {
	var ids []string
	for _, c := range r.Checks {
		if !c.Passed {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

func checkByID(t *testing.T, r onpage.AuditResult, id string) onpage.Check {
	t.Helper()
	for _, c := range r.Checks {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no check %s in %+v", id, r.Checks)
	return onpage.Check{}
}

func TestAuditOfAGoodPageScores100(t *testing.T) {
	r := onpage.Audit(goodPage(), "")
	if r.Score != 100 || len(r.Issues()) != 0 {
		t.Errorf("score %v, issues %+v; want 100 and none", r.Score, r.Issues())
	}
	want := []struct{ id, title, category, severity string }{
		{"http_status", "HTTP status", "technical", "high"},
		{"https", "HTTPS", "technical", "high"},
		{"title_present", "Title present", "content", "high"},
		{"title_length", "Title length", "content", "medium"},
		{"meta_description_present", "Meta description present", "content", "high"},
		{"meta_description_length", "Meta description length", "content", "medium"},
		{"single_h1", "Single h1", "content", "high"},
		{"heading_order", "Heading order", "accessibility", "low"},
		{"image_alt", "Image alt text", "accessibility", "medium"},
		{"canonical", "Canonical URL", "technical", "medium"},
		{"lang", "Language attribute", "accessibility", "low"},
		{"viewport", "Viewport", "technical", "medium"},
		{"word_count", "Word count", "content", "medium"},
		{"indexable", "Indexable", "technical", "high"},
		{"internal_links", "Internal links", "links", "low"},
		{"response_time", "Response time", "technical", "low"},
		{"page_size", "Page size", "technical", "low"},
	}
	if len(r.Checks) != len(want) {
		t.Fatalf("%d checks, want %d: %+v", len(r.Checks), len(want), r.Checks)
	}
	for i, w := range want {
		c := r.Checks[i]
		if c.ID != w.id || c.Title != w.title || c.Category != w.category || c.Severity != w.severity {
			t.Errorf("check %d = %s %q %s %s, want %s %q %s %s", i, c.ID, c.Title, c.Category, c.Severity, w.id, w.title, w.category, w.severity)
		}
		if c.Message == "" {
			t.Errorf("%s has no message", c.ID)
		}
	}

	r = onpage.Audit(goodPage(), "Coffee Beans")
	if r.Score != 100 || len(r.Checks) != len(want)+5 {
		t.Errorf("with its keyword: score %v over %d checks, want 100 over %d; failed %v", r.Score, len(r.Checks), len(want)+5, failedIDs(r))
	}
}

// TestAuditFindsKnownDefects gives a page eight defects worth 16 of the 35
// points.
func TestAuditFindsKnownDefects(t *testing.T) {
	p := goodPage()
	p.Title = "Coffee beans"
	p.MetaDescription = ""
	p.Headings = []provider.Heading{{Level: 1, Text: "Coffee"}, {Level: 2, Text: "Origins"}, {Level: 4, Text: "Yirgacheffe"}, {Level: 1, Text: "Also coffee"}, {Level: 3, Text: "Again"}}
	p.Images = []provider.PageImage{
		{Src: "https://shop.example.com/a.png", Alt: "A sack", HasAlt: true},
		{Src: "https://shop.example.com/b.png"},
		{Src: "https://shop.example.com/c.png", Alt: "  ", HasAlt: true},
	}
	p.Canonical = "/coffee-beans"
	p.Elapsed = 1500 * time.Millisecond
	p.MetaRobots = "max-snippet:-1" // not noindex

	r := onpage.Audit(p, "")
	want := []string{"title_length", "meta_description_present", "meta_description_length", "single_h1", "heading_order", "image_alt", "canonical", "response_time"}
	if got := failedIDs(r); !slices.Equal(got, want) {
		t.Errorf("failed %v, want %v", got, want)
	}
	if r.Score != 54.3 { // 19 of 35 points
		t.Errorf("score %v, want 54.3", r.Score)
	}
	for id, msg := range map[string]string{
		"title_length":            "The title has 12 characters; aim for 30 to 60.",
		"meta_description_length": "The meta description has 0 characters; aim for 70 to 160.",
		"single_h1":               "The page has 2 h1 headings; keep one h1 and make the others h2.",
		"heading_order":           `The headings skip a level 2 times, first from h2 "Origins" to h4 "Yirgacheffe"; use h3 there`,
		"image_alt":               "2 of 3 images have no alt text (the first is https://shop.example.com/b.png); describe each image in its alt attribute.",
		"canonical":               `The canonical link "/coffee-beans" is not an absolute URL`,
		"response_time":           "The page took 1.50 s to load; make it load in under 1.5 s",
		"title_present":           `The page has a title: "Coffee beans".`,
	} {
		if c := checkByID(t, r, id); !strings.HasPrefix(c.Message, msg) {
			t.Errorf("%s says %q, want %q", id, c.Message, msg)
		}
	}

	issues := r.Issues()
	var order []string
	for _, c := range issues {
		order = append(order, c.ID)
	}
	wantOrder := []string{"meta_description_present", "single_h1", "title_length", "meta_description_length", "image_alt", "canonical", "heading_order", "response_time"}
	if !slices.Equal(order, wantOrder) {
		t.Errorf("issues in order %v, want %v (high, medium, low; check order within each)", order, wantOrder)
	}
	if r.Checks[0].ID != "http_status" || r.Checks[3].ID != "title_length" {
		t.Errorf("Issues reordered the checks: %s, %s", r.Checks[0].ID, r.Checks[3].ID)
	}
}

func TestAuditKeywordChecks(t *testing.T) {
	ids := []string{"keyword_in_title", "keyword_in_h1", "keyword_in_meta_description", "keyword_in_first_100_words", "keyword_in_url"}
	filler := func(n int) string { return strings.Repeat("filler ", n) }

	for _, tc := range []struct {
		name    string
		keyword string
		edit    func(p *provider.Page)
		failed  []string
		score   float64
	}{
		{"present everywhere", "coffee beans", nil, nil, 100},
		{"ignores case", "COFFEE Beans", nil, nil, 100},
		{"absent everywhere", "espresso machine", nil, ids, 77.8}, // 35 of 45 points
		{"whole words only", "coffee bean", nil, ids, 77.8},
		{"in a longer word only", "coffee", func(p *provider.Page) {
			p.Title = "Coffeehouse guide to the best roasts of the year"
			p.Headings[0].Text = "Decaf"
			p.MetaDescription = "Decaf and coffeehouse news, reviews and guides to beans, grinders and roasts from all over."
			p.Text = "Decaf only. " + filler(300)
			p.FinalURL = "https://shop.example.com/coffeehouse"
		}, ids, 77.8},
		{"within the first 100 words", "coffee beans", func(p *provider.Page) { p.Text = filler(98) + "coffee beans " + filler(300) }, nil, 100},
		{"straddling word 100", "coffee beans", func(p *provider.Page) { p.Text = filler(99) + "coffee beans " + filler(300) }, []string{"keyword_in_first_100_words"}, 95.6},
		{"url with underscores", "coffee beans", func(p *provider.Page) { p.FinalURL = "https://shop.example.com/blog/coffee_beans-guide.html" }, nil, 100},
		{"url with escaped spaces", "coffee beans", func(p *provider.Page) { p.FinalURL = "https://shop.example.com/coffee%20beans" }, nil, 100},
		{"url judged after redirects", "coffee beans", func(p *provider.Page) { p.FinalURL = "https://shop.example.com/p/123" }, []string{"keyword_in_url"}, 97.8},
		{"url in the query only", "coffee beans", func(p *provider.Page) { p.FinalURL = "https://shop.example.com/p?q=coffee+beans" }, []string{"keyword_in_url"}, 97.8},
		{"only the h1 counts", "coffee beans", func(p *provider.Page) {
			p.Headings = []provider.Heading{{Level: 1, Text: "Fresh roasts"}, {Level: 2, Text: "Coffee beans"}}
		}, []string{"keyword_in_h1"}, 95.6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := goodPage()
			if tc.edit != nil {
				tc.edit(p)
			}
			r := onpage.Audit(p, tc.keyword)
			var got []string
			for _, id := range failedIDs(r) {
				if strings.HasPrefix(id, "keyword_") {
					got = append(got, id)
				}
			}
			if !slices.Equal(got, tc.failed) {
				t.Errorf("failed keyword checks %v, want %v", got, tc.failed)
			}
			if r.Score != tc.score {
				t.Errorf("score %v, want %v (failed %v)", r.Score, tc.score, failedIDs(r))
			}
		})
	}

	for _, kw := range []string{"", "   ", "!!! --"} {
		if r := onpage.Audit(goodPage(), kw); len(r.Checks) != 17 {
			t.Errorf("keyword %q: %d checks, want the 17 without keyword checks", kw, len(r.Checks))
		}
	}
	r := onpage.Audit(goodPage(), "Espresso Machine")
	if c := checkByID(t, r, "keyword_in_url"); !strings.Contains(c.Message, `"/coffee-beans" does not contain "Espresso Machine"`) || !strings.Contains(c.Message, "(/espresso-machine)") {
		t.Errorf("keyword_in_url says %q, want the path, the keyword and the slug to use", c.Message)
	}
}

func TestAuditOfAPageWithoutADocument(t *testing.T) {
	responseChecks := []string{"http_status", "https", "response_time", "page_size"}
	for _, tc := range []struct {
		name   string
		edit   func(p *provider.Page)
		passed []string
		say    string
		score  float64
	}{
		{"404", func(p *provider.Page) { p.StatusCode = 404 }, []string{"https", "response_time", "page_size"},
			"Not checked: the page answered with HTTP 404, so it has no content to audit; make the URL answer 200", 14.3},
		{"500 with a PDF", func(p *provider.Page) { p.StatusCode = 500; p.ContentType = "application/pdf" }, []string{"https", "response_time", "page_size"},
			"Not checked: the page answered with HTTP 500", 14.3},
		{"PDF", func(p *provider.Page) { p.ContentType = "application/pdf" }, responseChecks,
			"Not checked: the page is application/pdf, not HTML; audit the URL of an HTML page", 22.9},
		{"XHTML", func(p *provider.Page) { p.ContentType = "application/xhtml+xml" }, nil, "", 100},
		{"no content type", func(p *provider.Page) { p.ContentType = "" }, nil, "", 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := goodPage()
			tc.edit(p)
			r := onpage.Audit(p, "")
			if r.Score != tc.score {
				t.Errorf("score %v, want %v", r.Score, tc.score)
			}
			for _, c := range r.Checks {
				if tc.say == "" {
					if !c.Passed {
						t.Errorf("%s failed: %s", c.ID, c.Message)
					}
					continue
				}
				if want := slices.Contains(tc.passed, c.ID); c.Passed != want {
					t.Errorf("%s passed = %v, want %v (%s)", c.ID, c.Passed, want, c.Message)
				}
				if !slices.Contains(responseChecks, c.ID) && !strings.HasPrefix(c.Message, tc.say) {
					t.Errorf("%s says %q, want %q", c.ID, c.Message, tc.say)
				}
			}
		})
	}
	// A nil page is a page that never answered.
	if r := onpage.Audit(nil, "coffee"); r.Checks[0].Passed || r.Checks[0].Message != "The page answered with HTTP 0; make it answer with a 2xx status (restore the page or fix the link), or redirect it to a page that does." {
		t.Errorf("nil page: %+v, want http_status failed", r.Checks[0])
	}
}

// TestAuditSaysHowToFixEveryFailure audits a page that fails every check
// but the status, then a 404, and reads each failure's advice.
func TestAuditSaysHowToFixEveryFailure(t *testing.T) {
	p := &provider.Page{
		URL:         "http://shop.example.com/p?id=7",
		FinalURL:    "http://shop.example.com/p?id=7",
		StatusCode:  200,
		ContentType: "text/html",
		Bytes:       3 << 20,
		Elapsed:     3200 * time.Millisecond,
		MetaRobots:  "NOINDEX, nofollow",
		Headings:    []provider.Heading{{Level: 1, Text: "A"}, {Level: 1, Text: "B"}, {Level: 3, Text: "C"}},
		Images:      []provider.PageImage{{Src: "https://shop.example.com/x.png"}},
		Links:       []provider.Link{{Href: "https://other.example/", Text: "Elsewhere"}},
		Text:        "Ten words of text on this page and no more.",
		WordCount:   10,
	}
	r := onpage.Audit(p, "coffee beans")
	fixes := map[string]string{
		"https":                       "The page is served over http; serve it over HTTPS",
		"title_present":               "add a <title>",
		"title_length":                "The title has 0 characters; aim for 30 to 60.",
		"meta_description_present":    `add <meta name="description"`,
		"meta_description_length":     "aim for 70 to 160",
		"single_h1":                   "keep one h1 and make the others h2",
		"heading_order":               `from h1 "B" to h3 "C"; use h2 there`,
		"image_alt":                   "1 of 1 image has no alt text",
		"canonical":                   `add <link rel="canonical"`,
		"lang":                        `add the page's language, such as <html lang="en">`,
		"viewport":                    `add <meta name="viewport"`,
		"word_count":                  "The page has 10 words; write at least 300 words",
		"indexable":                   `says "NOINDEX, nofollow", which keeps the page out of search results; remove noindex`,
		"internal_links":              "link to related pages of the site",
		"response_time":               "The page took 3.20 s to load; make it load in under 1.5 s",
		"page_size":                   "The page is 3 MiB; keep it under 2 MiB",
		"keyword_in_title":            "put the keyword in the title",
		"keyword_in_h1":               "put the keyword in the page's h1",
		"keyword_in_meta_description": "use the keyword in the meta description",
		"keyword_in_first_100_words":  "use the keyword in the opening paragraph",
		"keyword_in_url":              `The URL path "/p" does not contain "coffee beans"; use the keyword in the URL, with hyphens between its words (/coffee-beans).`,
	}
	if got := failedIDs(r); len(got) != len(fixes) {
		t.Errorf("failed %v, want the %d checks of %v", got, len(fixes), fixes)
	}
	if r.Score != 6.7 { // the status alone: 3 of 45 points
		t.Errorf("score %v, want 6.7", r.Score)
	}

	p.StatusCode = 404
	r404 := onpage.Audit(p, "")
	fixes["http_status"] = "The page answered with HTTP 404; make it answer with a 2xx status"
	checks := slices.Clone(r.Checks)
	checks[0] = checkByID(t, r404, "http_status")
	for _, c := range checks {
		fix, ok := fixes[c.ID]
		if !ok {
			if !c.Passed {
				t.Errorf("%s failed unexpectedly: %s", c.ID, c.Message)
			}
			continue
		}
		if c.Passed || !strings.Contains(c.Message, fix) || !strings.Contains(c.Message, "; ") {
			t.Errorf("%s: passed %v, says %q; want a failure saying %q", c.ID, c.Passed, c.Message, fix)
		}
	}
}
