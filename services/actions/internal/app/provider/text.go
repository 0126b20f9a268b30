package provider

import (
	"context"
	"unicode"
)

// TextGenerator writes the pieces of text an action asks for: an article's
// title, meta description and body; an email's subject and body.
type TextGenerator interface {
	Generate(ctx context.Context, req TextRequest) (Text, error)
}

// Kinds of text, one per piece of writing an action asks for. The built-in
// generator writes each from its Inputs; a language model gets
// Instructions, Inputs and Fields.
const (
	// Inputs: keyword, tone, client_name, client_domain. Fields: title,
	// meta_description, content (HTML: <h2> sections, <p> paragraphs).
	TextBlogArticle = "blog_article"
	// Inputs: keyword, city, state, client_name, client_domain. Fields:
	// title, meta_description, content (HTML).
	TextGeoArticle = "geo_article"
	// Inputs: headline, body_points (one per line), client_name,
	// client_domain. Fields: title, body (plain text paragraphs).
	TextPressRelease = "press_release"
	// Inputs: topic, cta, client_name. Fields: title, body (under 1,500
	// characters).
	TextGBPPost = "gbp_post"
	// Inputs: prospect_url, prospect_domain, tone, client_name,
	// client_domain. Fields: subject, body (plain text).
	TextOutreachEmail = "outreach_email"
	// Inputs: topic, depth (1 to 3: clusters per pillar grow with it).
	// Fields: outline (one line per pillar, "Pillar: cluster; cluster; ..."),
	// summary.
	TextTopicalMap = "topical_map"
	// Inputs: url, keyword, current_title, current_meta_description,
	// current_h1, issues (one per line). Fields: title, meta_description,
	// recommendations (one per line).
	TextPageOptimization = "page_optimization"
	// Inputs: prompt. Hints: brand_name, competitors (comma-separated).
	// Fields: answer.
	TextLLMAnswer = "llm_answer"
	// Inputs: transcript, lead_grade, quality_grade. Fields: summary.
	TextCallSummary = "call_summary"
	// Inputs: client_name, period, facts (one figure per line, such as
	// "Average position: 13.3 to 10.7"). Fields: narrative (plain text
	// paragraphs, from the facts only).
	TextReportNarrative = "report_narrative"
)

// TextRequest asks for named pieces of text.
type TextRequest struct {
	// Kind is one of the Text* constants.
	Kind string
	// Instructions say what to write, in words, for a language model.
	Instructions string
	// Inputs are the facts to write from (keyword, tone, city, ...).
	Inputs map[string]string
	// Hints are facts the built-in generator may use but a language model
	// must not see: they would bias an answer that is being measured (the
	// brand an answer-engine visibility check looks for).
	Hints map[string]string
	// Fields are the pieces wanted, in order.
	Fields []TextField
}

// TextField is one piece of text wanted.
type TextField struct {
	Name        string // title
	Description string // "the article's title, under 60 characters"
}

// Text is what a generator wrote.
type Text struct {
	// Fields holds one non-empty text per requested field.
	Fields map[string]string
	// Model names what wrote it: the model's name, or "atrium-builtin".
	Model string
}

// WordCount counts the words of HTML or plain text: runs of characters
// outside tags, separated by spaces or tags. Entities (&amp;) count as the
// text they stand for, which is never a space. It is the one measure of an
// article's length: the built-in generator sizes its articles by it and
// generate_blog records it as word_count.
func WordCount(s string) int {
	n, inTag, inWord := 0, false, false
	for _, r := range s {
		switch {
		case r == '<':
			inTag, inWord = true, false
		case r == '>' && inTag:
			inTag = false
		case inTag:
		case unicode.IsSpace(r):
			inWord = false
		case !inWord:
			inWord = true
			n++
		}
	}
	return n
}
