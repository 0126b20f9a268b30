package handlers

import (
	"context"
	"math"
	"regexp"
	"strings"

	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/datasets"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// The call action: a transcript scored for lead and handling quality.

// Signals a call scorer looks for, as whole words or phrases.
var (
	buyingSignals  = []string{"appointment", "book", "booking", "schedule", "quote", "estimate", "price", "pricing", "cost", "how much", "available", "availability", "today", "tomorrow", "this week", "buy", "purchase", "order", "sign up", "interested", "emergency", "asap", "urgent", "my address", "my number", "my email", "call me back"}
	coldSignals    = []string{"wrong number", "not interested", "just looking", "just browsing", "remove me", "stop calling", "robocall", "spam", "survey", "no thanks", "cancel", "refund", "complaint", "too expensive"}
	goodHandling   = []string{"thank you for calling", "thanks for calling", "how can i help", "how may i help", "may i have your name", "can i get your name", "your name", "let me confirm", "to confirm", "i can book", "i'll book", "i will book", "i can schedule", "we have availability", "is there anything else", "have a great day", "have a good day", "appreciate"}
	poorHandling   = []string{"i don't know", "i dont know", "not my job", "call back later", "we're closed", "can't help", "cannot help", "no idea", "whatever", "hold on", "please hold"}
	wordBoundaries = regexp.MustCompile(`[^\pL\pN']+`)
)

// found returns the signals the normalised text contains.
func found(text string, signals []string) []string {
	var out []string
	for _, s := range signals {
		if strings.Contains(text, " "+s+" ") {
			out = append(out, s)
		}
	}
	return out
}

func grade(score float64) string {
	switch {
	case score >= 75:
		return "A"
	case score >= 50:
		return "B"
	case score >= 25:
		return "C"
	}
	return "D"
}

// scoreTranscript grades a call: the lead score rises with buying signals
// and falls with cold ones; the quality score rises with good handling
// and falls with poor handling and very short calls. Both start at 50.
func scoreTranscript(transcript string) (lead, quality float64, leadSignals, qualitySignals []string) {
	text := " " + strings.ToLower(wordBoundaries.ReplaceAllString(transcript, " ")) + " "
	buy, cold := found(text, buyingSignals), found(text, coldSignals)
	good, poor := found(text, goodHandling), found(text, poorHandling)
	lead = 50 + 12*float64(len(buy)) - 20*float64(len(cold))
	quality = 50 + 10*float64(len(good)) - 15*float64(len(poor))
	if words := len(strings.Fields(text)); words < 40 {
		quality -= 15 // too short to have helped the caller
	}
	clamp := func(v float64) float64 { return math.Max(0, math.Min(100, v)) }
	for _, s := range buy {
		leadSignals = append(leadSignals, "+"+s)
	}
	for _, s := range cold {
		leadSignals = append(leadSignals, "-"+s)
	}
	for _, s := range good {
		qualitySignals = append(qualitySignals, "+"+s)
	}
	for _, s := range poor {
		qualitySignals = append(qualitySignals, "-"+s)
	}
	return clamp(lead), clamp(quality), leadSignals, qualitySignals
}

// ScoreCall is score_call: a call transcript graded from its words, with
// a summary by the text generator.
func ScoreCall(ctx context.Context, x *action.Exec) (action.Result, error) {
	transcript := x.Input.Str("transcript")
	lead, quality, ls, qs := scoreTranscript(transcript)
	lg, qg := grade(lead), grade(quality)
	t, err := write(ctx, x, provider.TextCallSummary,
		"Summarise this phone call to a business in one to three sentences: who called, what they wanted, and how it ended.",
		map[string]string{"transcript": clip(transcript, 8000), "lead_grade": lg, "quality_grade": qg},
		provider.TextField{Name: "summary", Description: "one to three sentences"})
	if err != nil {
		return action.Result{}, err
	}
	toAny := func(s []string) []any {
		out := make([]any, len(s))
		for i, v := range s {
			out[i] = v
		}
		return out
	}
	d := datasets.CallScores
	row := map[string]any{
		d.ID: newID(x, d.Resource, 0), d.LeadGrade: lg, d.QualityGrade: qg,
		d.Score: math.Round((lead*0.6+quality*0.4)*10) / 10, d.Summary: oneLine(t.Fields["summary"]),
		d.Signals: map[string]any{"lead_score": lead, "quality_score": quality, "lead": toAny(ls), "quality": toAny(qs)},
	}
	if id := x.Input.Str("call_id"); id != "" {
		row[d.CallID] = id
	}
	return action.Result{Data: withModel(row, t.Model), Writes: []action.RecordWrite{upsert(d.Resource, row)}}, nil
}
