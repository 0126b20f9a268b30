package handlers

import (
	"context"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/datasets"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// The answer-engine action: is the brand named in an answer, and how
// early.

// mention is where a brand first appears in an answer: the order of first
// mentions among the brands looked for, from 1; 0 if it does not appear.
type mention struct {
	name     string
	at       int // byte offset of the first mention, -1 if none
	position int
}

// mentions finds each brand in the answer, as a whole phrase, ignoring
// case, and ranks the brands by where they first appear.
func mentions(answer string, brands []string) []mention {
	out := make([]mention, len(brands))
	for i, b := range brands {
		out[i] = mention{name: b, at: -1}
		re, err := regexp.Compile(`(?i)(^|[^\pL\pN])` + regexp.QuoteMeta(strings.TrimSpace(b)) + `($|[^\pL\pN])`)
		if err != nil {
			continue
		}
		if loc := re.FindStringIndex(answer); loc != nil {
			out[i].at = loc[0]
		}
	}
	order := slices.Clone(out)
	slices.SortStableFunc(order, func(a, b mention) int { return a.at - b.at })
	pos := 0
	for _, m := range order {
		if m.at < 0 {
			continue
		}
		pos++
		for i := range out {
			if out[i].name == m.name && out[i].at == m.at {
				out[i].position = pos
			}
		}
	}
	return out
}

// visibility scores a brand's place in an answer: 100 when it is named
// first, falling with the square root of its position (2nd: 70.7, 3rd:
// 57.7, 4th: 50), 0 when it is not named.
func visibility(position int) float64 {
	if position <= 0 {
		return 0
	}
	return math.Round(1000/math.Sqrt(float64(position))) / 10
}

// RunLLMVisibility is run_llm_visibility: the text generator answers the
// customer's question, and the answer is searched for the brand and its
// competitors.
func RunLLMVisibility(ctx context.Context, x *action.Exec) (action.Result, error) {
	prompt, brand, competitors := x.Input.Str("prompt"), x.Input.Str("brand_name"), x.Input.Strs("competitors")
	// The model gets only the customer's question: naming the brand would
	// bias the answer being measured.
	t, err := x.P.Text.Generate(ctx, provider.TextRequest{
		Kind:         provider.TextLLMAnswer,
		Instructions: "Answer the user's question as a helpful answer engine would, naming specific businesses, products or brands where relevant.",
		Inputs:       map[string]string{"prompt": prompt},
		Hints:        map[string]string{"brand_name": brand, "competitors": strings.Join(competitors, ", ")},
		Fields:       []provider.TextField{{Name: "answer", Description: "the answer to the question"}},
	})
	if err != nil {
		return action.Result{}, err
	}
	answer := strings.TrimSpace(t.Fields["answer"])
	if answer == "" {
		return action.Result{}, provider.Failure("text generator", 502, nil, "the answer engine's answer was empty")
	}
	found := mentions(answer, append([]string{brand}, competitors...))
	var comp []any
	for _, m := range found[1:] {
		comp = append(comp, map[string]any{"name": m.name, "mentioned": m.position > 0, "position": float64(m.position), "visibility": visibility(m.position)})
	}
	d := datasets.LLMReports
	row := map[string]any{
		d.ID: newID(x, d.Resource, 0), d.Engine: t.Model, d.Prompt: prompt, d.BrandName: brand,
		d.Mentioned: found[0].position > 0, d.Position: float64(found[0].position), d.Visibility: visibility(found[0].position),
		d.Competitors: orEmpty(comp), d.Answer: answer, d.ScoredAt: ts(x.Now),
	}
	return action.Result{Data: row, Writes: []action.RecordWrite{upsert(d.Resource, row)}}, nil
}
