package providertest

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// textRequests are the requests the handlers make, one per kind, with the
// inputs and fields each kind declares (provider.TextBlogArticle ...).
func textRequests() []provider.TextRequest {
	f := func(names ...string) []provider.TextField {
		out := make([]provider.TextField, len(names))
		for i, n := range names {
			out[i] = provider.TextField{Name: n, Description: "the " + strings.ReplaceAll(n, "_", " ")}
		}
		return out
	}
	client := map[string]string{"client_name": "Café Zoë", "client_domain": "cafezoe.example"}
	with := func(in map[string]string) map[string]string {
		for k, v := range client {
			in[k] = v
		}
		return in
	}
	return []provider.TextRequest{
		{Kind: provider.TextBlogArticle, Instructions: "Write a blog article about sourdough starter.",
			Inputs: with(map[string]string{"keyword": "sourdough starter", "tone": "friendly"}), Fields: f("title", "meta_description", "content")},
		{Kind: provider.TextGeoArticle, Instructions: "Write a local article.",
			Inputs: with(map[string]string{"keyword": "emergency plumber", "city": "Zürich", "state": "ZH"}), Fields: f("title", "meta_description", "content")},
		{Kind: provider.TextPressRelease, Instructions: "Write a press release.",
			Inputs: with(map[string]string{"headline": "Café Zoë opens a second shop", "body_points": "Opens in May\nTen new jobs"}), Fields: f("title", "body")},
		{Kind: provider.TextGBPPost, Instructions: "Write a business-profile post.",
			Inputs: with(map[string]string{"topic": "Weekend brunch", "cta": "book"}), Fields: f("title", "body")},
		{Kind: provider.TextOutreachEmail, Instructions: "Write an outreach email.",
			Inputs: with(map[string]string{"prospect_url": "https://bakingblog.example/", "prospect_domain": "bakingblog.example", "tone": "friendly"}), Fields: f("subject", "body")},
		{Kind: provider.TextTopicalMap, Instructions: "Build a topical map.",
			Inputs: map[string]string{"topic": "home baking", "depth": "2"}, Fields: f("outline", "summary")},
		{Kind: provider.TextPageOptimization, Instructions: "Suggest on-page optimisations.",
			Inputs: map[string]string{"url": "https://cafezoe.example/menu", "keyword": "brunch", "current_title": "Menu", "current_meta_description": "",
				"current_h1": "Our menu", "issues": "The title has 4 characters; aim for 30 to 60.\nThe page has no meta description."},
			Fields: f("title", "meta_description", "recommendations")},
		{Kind: provider.TextLLMAnswer, Instructions: "Answer the user's question.",
			Inputs: map[string]string{"prompt": "Where is the best brunch in Zürich?"}, Hints: map[string]string{"brand_name": "Café Zoë", "competitors": "Babel"},
			Fields: f("answer")},
		{Kind: provider.TextCallSummary, Instructions: "Summarise this call.",
			Inputs: map[string]string{"transcript": "Caller: I'd like to book a table for six today.\nAgent: Of course.", "lead_grade": "A", "quality_grade": "B"},
			Fields: f("summary")},
	}
}

// RunText runs the text generator's contract against generators made by
// newGenerator: every kind of text the handlers ask for comes back with
// every requested field written (a handler refuses an answer without one),
// and the model that wrote it named; the caller's context ends a call.
func RunText(t *testing.T, newGenerator func(t *testing.T) provider.TextGenerator) {
	t.Run("EveryKindGetsEveryRequestedField", func(t *testing.T) {
		g := newGenerator(t)
		for _, req := range textRequests() {
			text, err := g.Generate(t.Context(), req)
			if err != nil {
				t.Errorf("%s: %v", req.Kind, err)
				continue
			}
			if strings.TrimSpace(text.Model) == "" {
				t.Errorf("%s: no model named", req.Kind)
			}
			if len(text.Fields) != len(req.Fields) {
				t.Errorf("%s: fields %v, want exactly the %d requested", req.Kind, slices.Collect(maps.Keys(text.Fields)), len(req.Fields))
			}
			for _, f := range req.Fields {
				v := text.Fields[f.Name]
				if strings.TrimSpace(v) == "" || !utf8.ValidString(v) {
					t.Errorf("%s: field %s is %q, want text", req.Kind, f.Name, v)
				}
			}
		}
	})
	t.Run("TheCallersContextEndsTheCall", func(t *testing.T) {
		g := newGenerator(t)
		callerContexts(t, func(ctx context.Context) error {
			_, err := g.Generate(ctx, textRequests()[0])
			return err
		})
	})
}
