package builtintext_test

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/atrium-hq/atrium/services/actions/internal/adapters/builtintext"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

func fields(names ...string) []provider.TextField {
	out := make([]provider.TextField, len(names))
	for i, n := range names {
		out[i] = provider.TextField{Name: n, Description: "the " + n}
	}
	return out
}

// requests has one typical request per kind.
func requests() []provider.TextRequest {
	return []provider.TextRequest{
		{Kind: provider.TextBlogArticle, Inputs: map[string]string{"keyword": "emergency plumber", "tone": "friendly", "client_name": "Acme Plumbing", "client_domain": "acmeplumbing.example"},
			Fields: fields("title", "meta_description", "content")},
		{Kind: provider.TextGeoArticle, Inputs: map[string]string{"keyword": "roof repair", "city": "Austin", "state": "TX", "client_name": "Top Roofs", "client_domain": "toproofs.example"},
			Fields: fields("title", "meta_description", "content")},
		{Kind: provider.TextPressRelease, Inputs: map[string]string{"headline": "Acme Opens a Second Showroom in Dallas", "body_points": "A 5,000 square foot showroom on Main Street\n- Twenty new local jobs\n", "client_name": "Acme", "client_domain": "acme.example"},
			Fields: fields("title", "body")},
		{Kind: provider.TextGBPPost, Inputs: map[string]string{"topic": "spring AC tune-up special", "cta": "book", "client_name": "CoolAir"},
			Fields: fields("title", "body")},
		{Kind: provider.TextOutreachEmail, Inputs: map[string]string{"prospect_url": "https://www.homeblog.example/best-tips", "prospect_domain": "homeblog.example", "tone": "professional", "client_name": "Acme", "client_domain": "acme.example"},
			Fields: fields("subject", "body")},
		{Kind: provider.TextTopicalMap, Inputs: map[string]string{"topic": "solar panels", "depth": "2"},
			Fields: fields("outline", "summary")},
		{Kind: provider.TextPageOptimization, Inputs: map[string]string{"url": "https://acme.example/plumbing", "keyword": "emergency plumber", "current_title": "Services - Acme", "current_h1": "Our Services", "issues": "Title too short\nMissing meta description\n3 images without alt text"},
			Fields: fields("title", "meta_description", "recommendations")},
		{Kind: provider.TextLLMAnswer, Inputs: map[string]string{"prompt": "Who is the best plumber in Austin?"}, Hints: map[string]string{"brand_name": "Acme Plumbing", "competitors": "Bolt Plumbing, Zap Drains"},
			Fields: fields("answer")},
		{Kind: provider.TextCallSummary, Inputs: map[string]string{"transcript": callTranscript, "lead_grade": "A", "quality_grade": "B"},
			Fields: fields("summary")},
	}
}

const callTranscript = `Agent: Thanks for calling Acme Plumbing, how can I help?
Caller: Hi. My kitchen sink is leaking and I need someone to fix it this week. How much would that cost?
Agent: We can book you in for tomorrow at 9 am, and the call-out fee is $80.
Caller: Great, thanks.`

func generate(t *testing.T, req provider.TextRequest) provider.Text {
	t.Helper()
	text, err := builtintext.New().Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate(%s): %v", req.Kind, err)
	}
	return text
}

func TestGenerateIsDeterministic(t *testing.T) {
	for _, req := range requests() {
		t.Run(req.Kind, func(t *testing.T) {
			a, b := generate(t, req), generate(t, req)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("the same request gave different texts:\n%v\n%v", a.Fields, b.Fields)
			}
			changed := req
			changed.Inputs = map[string]string{}
			for k, v := range req.Inputs {
				changed.Inputs[k] = v
			}
			for _, k := range []string{"keyword", "headline", "topic", "prospect_domain", "url", "prompt", "transcript"} {
				if v, ok := changed.Inputs[k]; ok {
					changed.Inputs[k] = v + " deluxe. Extra words here."
					break
				}
			}
			if c := generate(t, changed); reflect.DeepEqual(a.Fields, c.Fields) {
				t.Errorf("different inputs gave the same text: %v", c.Fields)
			}
		})
	}
}

// The phrasing is chosen from the inputs' hash: different keywords do not
// all get the same title pattern.
func TestGenerateVariesThePhrasingWithTheInputs(t *testing.T) {
	patterns := map[string]bool{}
	for i := range 12 {
		kw := fmt.Sprintf("service %c", 'a'+i)
		text := generate(t, provider.TextRequest{Kind: provider.TextBlogArticle, Inputs: map[string]string{"keyword": kw}, Fields: fields("title", "content")})
		patterns[strings.ReplaceAll(text.Fields["title"], "Service "+string(rune('A'+i)), "X")] = true
	}
	if len(patterns) < 2 {
		t.Errorf("12 keywords gave %d title patterns, want several: %v", len(patterns), patterns)
	}
}

func TestGenerateFillsEveryRequestedField(t *testing.T) {
	reqs := append(requests(),
		provider.TextRequest{Kind: "brand_story", Instructions: "Write a short brand story for the client. Keep it warm.", Inputs: map[string]string{"client_name": "Acme", "founded": "1998"},
			Fields: fields("title", "summary", "story")},
		provider.TextRequest{Kind: provider.TextBlogArticle, Fields: fields("title", "meta_description", "content")},
		provider.TextRequest{Kind: "nothing", Fields: fields("body")},
	)
	for _, req := range reqs {
		t.Run(req.Kind, func(t *testing.T) {
			req.Fields = append(req.Fields, provider.TextField{Name: "extra_notes", Description: "anything else"})
			text := generate(t, req)
			if text.Model != "atrium-builtin" {
				t.Errorf("model = %q, want atrium-builtin", text.Model)
			}
			if len(text.Fields) != len(req.Fields) {
				t.Errorf("fields = %v, want exactly the %d requested", text.Fields, len(req.Fields))
			}
			for _, f := range req.Fields {
				if strings.TrimSpace(text.Fields[f.Name]) == "" {
					t.Errorf("field %s is empty", f.Name)
				}
				if strings.Contains(text.Fields[f.Name], "{") {
					t.Errorf("field %s has an unfilled placeholder: %q", f.Name, text.Fields[f.Name])
				}
			}
		})
	}
}

// article is what a test reads out of an article's HTML.
type article struct {
	words         int
	firstP        string
	h2, h3        []string
	olItems       int
	h3AfterFAQ    int
	text          string
	h2BeforeFirst bool
}

// parseArticle parses content as well-formed HTML (every tag closed, only
// HTML entities) and reads its structure.
func parseArticle(t *testing.T, content string) article {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader("<div>" + content + "</div>"))
	dec.Entity = xml.HTMLEntity
	var a article
	var stack []string
	var cur strings.Builder
	var all strings.Builder
	faq := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("content is not well-formed HTML: %v\n%s", err, content)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			stack = append(stack, tok.Name.Local)
			cur.Reset()
			if tok.Name.Local == "li" && len(stack) >= 2 && stack[len(stack)-2] == "ol" {
				a.olItems++
			}
		case xml.EndElement:
			text := strings.TrimSpace(cur.String())
			switch tok.Name.Local {
			case "h2":
				a.h2 = append(a.h2, text)
				faq = strings.Contains(strings.ToLower(text), "question")
			case "h3":
				a.h3 = append(a.h3, text)
				if faq {
					a.h3AfterFAQ++
				}
			case "p":
				if a.firstP == "" {
					a.firstP = text
					a.h2BeforeFirst = len(a.h2) > 0
				}
			}
			stack = stack[:len(stack)-1]
		case xml.CharData:
			cur.Write(tok)
			all.Write(tok)
			all.WriteString(" ")
		}
	}
	a.text = all.String()
	a.words = len(strings.Fields(a.text))
	return a
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

func checkArticle(t *testing.T, text provider.Text, keyword string) article {
	t.Helper()
	title, meta := text.Fields["title"], text.Fields["meta_description"]
	if !containsFold(title, keyword) {
		t.Errorf("title %q lacks the keyword %q", title, keyword)
	}
	if n := utf8.RuneCountInString(title); n > 60 {
		t.Errorf("title %q is %d characters, want at most 60", title, n)
	}
	if !strings.Contains(meta, keyword) {
		t.Errorf("meta description %q lacks the keyword %q", meta, keyword)
	}
	if n := utf8.RuneCountInString(meta); n < 120 || n > 160 {
		t.Errorf("meta description is %d characters, want 120 to 160: %q", n, meta)
	}
	a := parseArticle(t, text.Fields["content"])
	if a.words < 600 || a.words > 900 {
		t.Errorf("content has %d words, want 600 to 900", a.words)
	}
	if len(a.h2) < 4 || len(a.h2) > 6 {
		t.Errorf("content has %d <h2> sections, want 4 to 6: %q", len(a.h2), a.h2)
	}
	if a.h2BeforeFirst || !strings.Contains(a.firstP, keyword) {
		t.Errorf("the introduction %q does not come first with the keyword %q", a.firstP, keyword)
	}
	inH2 := false
	for _, h := range a.h2 {
		inH2 = inH2 || containsFold(h, keyword)
	}
	if !inH2 {
		t.Errorf("no <h2> has the keyword: %q", a.h2)
	}
	if a.olItems < 3 {
		t.Errorf("content has %d step-by-step <ol> items, want at least 3", a.olItems)
	}
	if a.h3AfterFAQ < 2 || a.h3AfterFAQ > 3 {
		t.Errorf("the FAQ has %d <h3> questions, want 2 or 3 (h3: %q)", a.h3AfterFAQ, a.h3)
	}
	return a
}

func TestBlogArticle(t *testing.T) {
	for _, kw := range []string{"emergency plumber", "SEO services", "dog grooming", "best espresso machines for small cafés", "x"} {
		for _, tone := range []string{"professional", "friendly", "casual", "authoritative", "playful", "", "sarcastic"} {
			t.Run(kw+"/"+tone, func(t *testing.T) {
				text := generate(t, provider.TextRequest{Kind: provider.TextBlogArticle,
					Inputs: map[string]string{"keyword": kw, "tone": tone, "client_name": "Acme & Sons", "client_domain": "acme.example"},
					Fields: fields("title", "meta_description", "content")})
				a := checkArticle(t, text, kw)
				if !strings.Contains(a.text, "Acme & Sons") || !strings.Contains(a.text, "acme.example") {
					t.Errorf("the article does not mention the client and its domain")
				}
			})
		}
	}
}

func TestBlogArticleWithoutClient(t *testing.T) {
	text := generate(t, provider.TextRequest{Kind: provider.TextBlogArticle, Inputs: map[string]string{"keyword": "gutter cleaning"},
		Fields: fields("title", "meta_description", "content")})
	a := checkArticle(t, text, "gutter cleaning")
	if strings.Contains(a.text, "our team,") || strings.Contains(text.Fields["content"], "https://\"") {
		t.Errorf("the article refers to a missing client or domain")
	}
}

func TestToneChangesTheText(t *testing.T) {
	seen := map[string]string{}
	intros := map[string]string{}
	for _, tone := range []string{"professional", "friendly", "casual", "authoritative", "playful"} {
		text := generate(t, provider.TextRequest{Kind: provider.TextBlogArticle, Inputs: map[string]string{"keyword": "emergency plumber", "tone": tone},
			Fields: fields("title", "meta_description", "content")})
		if other, ok := seen[text.Fields["title"]]; ok {
			t.Errorf("tones %s and %s gave the same title %q", other, tone, text.Fields["title"])
		}
		seen[text.Fields["title"]] = tone
		intro := parseArticle(t, text.Fields["content"]).firstP
		if other, ok := intros[intro]; ok {
			t.Errorf("tones %s and %s gave the same introduction", other, tone)
		}
		intros[intro] = tone
	}
	for _, tone := range []string{"friendly", "casual", "authoritative", "playful"} {
		a := generate(t, provider.TextRequest{Kind: provider.TextOutreachEmail, Inputs: map[string]string{"prospect_domain": "blog.example", "tone": "professional", "client_name": "Acme"}, Fields: fields("subject", "body")})
		b := generate(t, provider.TextRequest{Kind: provider.TextOutreachEmail, Inputs: map[string]string{"prospect_domain": "blog.example", "tone": tone, "client_name": "Acme"}, Fields: fields("subject", "body")})
		if a.Fields["body"] == b.Fields["body"] {
			t.Errorf("outreach email in tone %s reads like the professional one", tone)
		}
	}
}

func TestGeoArticleNamesTheCity(t *testing.T) {
	for _, in := range []map[string]string{
		{"keyword": "roof repair", "city": "Austin", "state": "TX", "client_name": "Top Roofs", "client_domain": "toproofs.example"},
		{"keyword": "wedding photographer", "city": "San Luis Obispo", "state": "California", "tone": "playful"},
		{"keyword": "emergency dental care for children", "city": "Winston-Salem", "state": "North Carolina"},
	} {
		t.Run(in["city"], func(t *testing.T) {
			text := generate(t, provider.TextRequest{Kind: provider.TextGeoArticle, Inputs: in, Fields: fields("title", "meta_description", "content")})
			a := checkArticle(t, text, in["keyword"])
			city := in["city"]
			if !strings.Contains(text.Fields["title"], city) {
				t.Errorf("title %q does not name %s", text.Fields["title"], city)
			}
			if !strings.Contains(text.Fields["meta_description"], city) {
				t.Errorf("meta description %q does not name %s", text.Fields["meta_description"], city)
			}
			if !strings.Contains(a.firstP, city+", "+in["state"]) {
				t.Errorf("the introduction does not name %s, %s: %q", city, in["state"], a.firstP)
			}
			n := 0
			for _, h := range a.h2 {
				if strings.Contains(h, city) {
					n++
				}
			}
			if n < 3 {
				t.Errorf("%d sections name %s, want several: %q", n, city, a.h2)
			}
		})
	}
}

func TestPressRelease(t *testing.T) {
	text := generate(t, requests()[2])
	body := text.Fields["body"]
	if text.Fields["title"] != "Acme Opens a Second Showroom in Dallas" {
		t.Errorf("title = %q, want the headline", text.Fields["title"])
	}
	for _, want := range []string{"Acme today announced", "A 5,000 square foot showroom on Main Street.", "Twenty new local jobs.", "said a spokesperson for Acme", "About Acme", "acme.example"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	paras := strings.Split(body, "\n\n")
	if len(paras) < 5 {
		t.Errorf("body has %d paragraphs, want announcement, one per point, quote and boilerplate", len(paras))
	}
	if strings.Contains(body, "<") {
		t.Errorf("body is not plain text:\n%s", body)
	}

	empty := generate(t, provider.TextRequest{Kind: provider.TextPressRelease, Inputs: map[string]string{"headline": "Acme Turns 25", "client_name": "Acme"}, Fields: fields("title", "body")})
	if b := empty.Fields["body"]; !strings.Contains(b, "Acme today announced") || !strings.Contains(b, "About Acme") || len(strings.Split(b, "\n\n")) < 4 {
		t.Errorf("release without body points:\n%s", b)
	}
}

func TestGBPPost(t *testing.T) {
	want := map[string]string{"book": "Book", "order": "Order", "shop": "Shop", "learn_more": "Learn more", "sign_up": "Sign up", "call": "Call", "": "get in touch"}
	for cta, word := range want {
		t.Run("cta "+cta, func(t *testing.T) {
			text := generate(t, provider.TextRequest{Kind: provider.TextGBPPost, Inputs: map[string]string{"topic": "spring AC tune-up special", "cta": cta, "client_name": "CoolAir"}, Fields: fields("title", "body")})
			body := text.Fields["body"]
			if !strings.Contains(body, "spring AC tune-up special") || !containsFold(text.Fields["title"], "spring AC tune-up special") {
				t.Errorf("post does not mention the topic: %q / %q", text.Fields["title"], body)
			}
			if !containsFold(body, word) {
				t.Errorf("body lacks the call to action %q: %q", word, body)
			}
			if n := utf8.RuneCountInString(body); n >= 1500 {
				t.Errorf("body is %d characters, want under 1,500", n)
			}
		})
	}
	long := generate(t, provider.TextRequest{Kind: provider.TextGBPPost, Inputs: map[string]string{"topic": strings.Repeat("our huge summer sale on everything ", 100), "cta": "shop"}, Fields: fields("title", "body")})
	if n := utf8.RuneCountInString(long.Fields["body"]); n >= 1500 || !containsFold(long.Fields["body"], "shop") {
		t.Errorf("a long topic gave a body of %d characters (want under 1,500 with its call to action): %q", n, long.Fields["body"])
	}
}

func TestOutreachEmail(t *testing.T) {
	for _, tone := range []string{"professional", "friendly", "casual", "authoritative", "playful"} {
		t.Run(tone, func(t *testing.T) {
			text := generate(t, provider.TextRequest{Kind: provider.TextOutreachEmail,
				Inputs: map[string]string{"prospect_url": "https://www.homeblog.example/best-tips", "tone": tone, "client_name": "Acme", "client_domain": "acme.example"},
				Fields: fields("subject", "body")})
			subject, body := text.Fields["subject"], text.Fields["body"]
			if !strings.Contains(subject+body, "homeblog.example") {
				t.Errorf("email is not addressed to the prospect (domain from the URL): %q\n%s", subject, body)
			}
			for _, want := range []string{"Acme", "acme.example", "collaboration"} {
				if !strings.Contains(body, want) {
					t.Errorf("body lacks %q:\n%s", want, body)
				}
			}
			lines := strings.Split(strings.TrimSpace(body), "\n")
			if last := lines[len(lines)-1]; last != "acme.example" || !strings.HasSuffix(lines[len(lines)-3], ",") {
				t.Errorf("body does not end with a sign-off:\n%s", body)
			}
			if n := len(strings.Fields(body)); n > 200 {
				t.Errorf("body has %d words, want a short email", n)
			}
		})
	}
}

func TestTopicalMapClustersGrowWithDepth(t *testing.T) {
	line := regexp.MustCompile(`^([^:;]+): (.+)$`)
	for depth, want := range map[string]int{"1": 2, "2": 4, "3": 6, "": 4, "9": 6} {
		for _, topic := range []string{"solar panels", "vegan baking", "tax advice: small business"} {
			t.Run(topic+"/depth "+depth, func(t *testing.T) {
				text := generate(t, provider.TextRequest{Kind: provider.TextTopicalMap, Inputs: map[string]string{"topic": topic, "depth": depth}, Fields: fields("outline", "summary")})
				lines := strings.Split(text.Fields["outline"], "\n")
				if len(lines) < 4 || len(lines) > 6 {
					t.Errorf("outline has %d pillars, want 4 to 6:\n%s", len(lines), text.Fields["outline"])
				}
				word := strings.Fields(topic)[0]
				for _, l := range lines {
					m := line.FindStringSubmatch(l)
					if m == nil {
						t.Errorf("line %q is not \"Pillar: cluster; cluster\"", l)
						continue
					}
					clusters := strings.Split(m[2], "; ")
					if len(clusters) != want {
						t.Errorf("pillar %q has %d clusters, want %d", m[1], len(clusters), want)
					}
					for _, c := range append(clusters, m[1]) {
						if !containsFold(c, word) {
							t.Errorf("%q is not about %s", c, topic)
						}
					}
				}
				if n := len(regexp.MustCompile(`[.!?](\s|$)`).FindAllString(text.Fields["summary"], -1)); n < 1 || n > 2 {
					t.Errorf("summary has %d sentences, want 1 or 2: %q", n, text.Fields["summary"])
				}
			})
		}
	}
}

func TestPageOptimization(t *testing.T) {
	text := generate(t, requests()[6])
	if !containsFold(text.Fields["title"], "emergency plumber") || utf8.RuneCountInString(text.Fields["title"]) > 60 {
		t.Errorf("title = %q, want the keyword in at most 60 characters", text.Fields["title"])
	}
	meta := text.Fields["meta_description"]
	if n := utf8.RuneCountInString(meta); !strings.Contains(meta, "emergency plumber") || n < 120 || n > 160 {
		t.Errorf("meta description (%d characters) = %q, want the keyword in 120 to 160", n, meta)
	}
	recs := strings.Split(text.Fields["recommendations"], "\n")
	if len(recs) < 4 {
		t.Fatalf("recommendations = %q, want one per issue and keyword placement", recs)
	}
	for i, want := range []string{"title", "meta description", "alt text"} {
		if !containsFold(recs[i], want) {
			t.Errorf("recommendation %d = %q, want a fix for the %s issue", i, recs[i], want)
		}
	}
	if !strings.Contains(text.Fields["recommendations"], `Rewrite the H1 (now "Our Services") to include "emergency plumber"`) {
		t.Errorf("recommendations do not place the keyword in the H1:\n%s", text.Fields["recommendations"])
	}

	noKeyword := generate(t, provider.TextRequest{Kind: provider.TextPageOptimization,
		Inputs: map[string]string{"url": "https://acme.example/about", "current_title": "About Our Family Bakery | Acme Bakes", "issues": "Page is slow to load"},
		Fields: fields("title", "meta_description", "recommendations")})
	if !strings.Contains(noKeyword.Fields["title"], "About Our Family Bakery") {
		t.Errorf("without a keyword the title %q is not built from the current title", noKeyword.Fields["title"])
	}
	if !strings.Contains(noKeyword.Fields["recommendations"], "compress images") {
		t.Errorf("recommendations = %q, want a fix for the slow page", noKeyword.Fields["recommendations"])
	}
}

func TestLLMAnswerMentionsTheBrandForSomePromptsOnly(t *testing.T) {
	hints := map[string]string{"brand_name": "Acme Plumbing", "competitors": "Bolt Plumbing, Zap Drains, Pipe Pros"}
	var mentioned, absent, first, later bool
	for i := 0; i < 200 && !(mentioned && absent && first && later); i++ {
		text := generate(t, provider.TextRequest{Kind: provider.TextLLMAnswer,
			Inputs: map[string]string{"prompt": fmt.Sprintf("Who is the best plumber in city number %d?", i)},
			Hints:  hints, Fields: fields("answer")})
		answer := text.Fields["answer"]
		items := regexp.MustCompile(`(?m)^\d+\. (.+)$`).FindAllStringSubmatch(answer, -1)
		if len(items) < 2 {
			t.Fatalf("answer has %d numbered recommendations, want at least 2:\n%s", len(items), answer)
		}
		for _, it := range items {
			named := false
			for _, n := range []string{"Acme Plumbing", "Bolt Plumbing", "Zap Drains", "Pipe Pros"} {
				named = named || strings.HasPrefix(it[1], n+" ")
			}
			if !named {
				t.Errorf("recommendation %q names none of the candidates", it[1])
			}
		}
		switch {
		case !strings.Contains(answer, "Acme Plumbing"):
			absent = true
		case strings.HasPrefix(items[0][1], "Acme Plumbing"):
			mentioned, first = true, true
		default:
			mentioned, later = true, true
		}
	}
	if !mentioned || !absent || !first || !later {
		t.Errorf("over 200 prompts: brand mentioned %v, absent %v, first %v, later %v; want all", mentioned, absent, first, later)
	}

	generic := generate(t, provider.TextRequest{Kind: provider.TextLLMAnswer, Inputs: map[string]string{"prompt": "best plumber in Austin"}, Fields: fields("answer")})
	if a := generic.Fields["answer"]; !strings.Contains(a, "best plumber in Austin") || !strings.Contains(a, "1. ") {
		t.Errorf("answer without hints = %q, want a generic numbered answer to the prompt", a)
	}
}

func TestCallSummary(t *testing.T) {
	text := generate(t, requests()[8])
	s := text.Fields["summary"]
	for _, want := range []string{"kitchen sink is leaking", "tomorrow at 9 am", "A as a lead", "B for quality"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q: %q", want, s)
		}
	}
	if n := len(regexp.MustCompile(`[.!?]"?(\s|$)`).FindAllString(s, -1)); n < 1 || n > 3 {
		t.Errorf("summary has %d sentences, want 1 to 3: %q", n, s)
	}

	plain := generate(t, provider.TextRequest{Kind: provider.TextCallSummary, Inputs: map[string]string{"transcript": "hello. I would like a quote for new windows in my house. thanks"}, Fields: fields("summary")})
	if !strings.Contains(plain.Fields["summary"], "quote for new windows") {
		t.Errorf("summary of an unlabelled transcript = %q, want the caller's request", plain.Fields["summary"])
	}
}
