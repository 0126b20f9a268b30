package app

import (
	"context"
	"errors"
	"math"
	"regexp"
	"slices"
	"strings"
)

// The local, answer-engine, call and platform actions.

func runGridSearch(ctx context.Context, x *Exec) (Result, error) {
	q := GridQuery{
		Keyword: x.Input.Str("keyword"), Lat: x.Input.Num("lat"), Lng: x.Input.Num("lng"), RadiusKm: x.Input.Num("radius"),
		Size: 5, Domain: x.clientDomain(), BusinessName: x.clientName(),
	}
	g, err := x.P.Search.GridSearch(ctx, q)
	if err != nil {
		return Result{}, err
	}
	points := make([]any, len(g.Points))
	for i, p := range g.Points {
		points[i] = map[string]any{"lat": p.Lat, "lng": p.Lng, "rank": float64(p.Rank)}
	}
	competitors := make([]any, len(g.Competitors))
	for i, c := range g.Competitors {
		competitors[i] = c
	}
	row := map[string]any{
		"id": x.newID("grid_searches", 0), "keyword": q.Keyword, "grid_size": float64(q.Size), "average_rank": g.AverageRank,
		"lat": q.Lat, "lng": q.Lng, "radius_km": q.RadiusKm, "points": points, "competitors": competitors,
		"source": x.P.Search.Source(), "tracked_at": ts(x.Now),
	}
	return Result{Data: row, Writes: []RecordWrite{{Resource: "grid_searches", Mode: Upsert, Rows: []map[string]any{row}}}}, nil
}

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

func runLLMVisibility(ctx context.Context, x *Exec) (Result, error) {
	prompt, brand, competitors := x.Input.Str("prompt"), x.Input.Str("brand_name"), x.Input.Strs("competitors")
	// The model gets only the customer's question: naming the brand would
	// bias the answer being measured.
	t, err := x.P.Text.Generate(ctx, TextRequest{
		Kind:         TextLLMAnswer,
		Instructions: "Answer the user's question as a helpful answer engine would, naming specific businesses, products or brands where relevant.",
		Inputs:       map[string]string{"prompt": prompt},
		Hints:        map[string]string{"brand_name": brand, "competitors": strings.Join(competitors, ", ")},
		Fields:       []TextField{{Name: "answer", Description: "the answer to the question"}},
	})
	if err != nil {
		return Result{}, err
	}
	answer := strings.TrimSpace(t.Fields["answer"])
	if answer == "" {
		return Result{}, ProviderFailure("text generator", 502, nil, "the answer engine's answer was empty")
	}
	found := mentions(answer, append([]string{brand}, competitors...))
	var comp []any
	for _, m := range found[1:] {
		comp = append(comp, map[string]any{"name": m.name, "mentioned": m.position > 0, "position": float64(m.position), "visibility": visibility(m.position)})
	}
	row := map[string]any{
		"id": x.newID("llm_reports", 0), "engine": t.Model, "prompt": prompt, "brand_name": brand,
		"mentioned": found[0].position > 0, "position": float64(found[0].position), "visibility": visibility(found[0].position),
		"competitors": orEmpty(comp), "answer": answer, "scored_at": ts(x.Now),
	}
	return Result{Data: row, Writes: []RecordWrite{{Resource: "llm_reports", Mode: Upsert, Rows: []map[string]any{row}}}}, nil
}

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

func runScoreCall(ctx context.Context, x *Exec) (Result, error) {
	transcript := x.Input.Str("transcript")
	lead, quality, ls, qs := scoreTranscript(transcript)
	lg, qg := grade(lead), grade(quality)
	t, err := write(ctx, x, TextCallSummary,
		"Summarise this phone call to a business in one to three sentences: who called, what they wanted, and how it ended.",
		map[string]string{"transcript": clip(transcript, 8000), "lead_grade": lg, "quality_grade": qg},
		TextField{Name: "summary", Description: "one to three sentences"})
	if err != nil {
		return Result{}, err
	}
	toAny := func(s []string) []any {
		out := make([]any, len(s))
		for i, v := range s {
			out[i] = v
		}
		return out
	}
	row := map[string]any{
		"id": x.newID("call_scores", 0), "lead_grade": lg, "quality_grade": qg,
		"score": math.Round((lead*0.6+quality*0.4)*10) / 10, "summary": oneLine(t.Fields["summary"]),
		"signals": map[string]any{"lead_score": lead, "quality_score": quality, "lead": toAny(ls), "quality": toAny(qs)},
	}
	if id := x.Input.Str("call_id"); id != "" {
		row["call_id"] = id
	}
	return Result{Data: withModel(row, t.Model), Writes: []RecordWrite{{Resource: "call_scores", Mode: Upsert, Rows: []map[string]any{row}}}}, nil
}

func runSendEmail(ctx context.Context, x *Exec) (Result, error) {
	to, subject, html := x.Input.Str("to"), x.Input.Str("subject"), x.Input.Str("html")
	sent, err := x.P.Mail.Send(ctx, Mail{To: to, Subject: subject, HTML: html})
	if err != nil {
		return Result{}, err
	}
	_, domain, _ := strings.Cut(to, "@")
	row := map[string]any{
		"id": x.newID("backlink_outreach", 0), "target_domain": strings.ToLower(domain), "contact_email": to,
		"subject": subject, "body": html, "status": "sent", "sent_at": ts(x.Now), "message_id": sent.MessageID,
		"notes": "Sent by send_prospect_email from " + sent.From,
	}
	data := map[string]any{"id": row["id"], "to": to, "from": sent.From, "subject": subject, "status": "sent", "message_id": sent.MessageID, "sent_at": row["sent_at"]}
	return Result{Data: data, Writes: []RecordWrite{{Resource: "backlink_outreach", Mode: Upsert, Rows: []map[string]any{row}}}}, nil
}

func runDeployBlog(ctx context.Context, x *Exec) (Result, error) {
	data := map[string]any{}
	var writes []RecordWrite
	if id := x.Input.Str("post_id"); id != "" {
		post, err := x.Records.GetRecord(ctx, x.Client.ID, "blogs", id)
		if errors.Is(err, ErrNotFound) {
			return Result{}, ProviderFailure("blog", 404, nil, "blog post %s not found among client %s's blogs", id, x.Client.ID)
		}
		if err != nil {
			return Result{}, ProviderFailure("blog", 503, err, "cannot read blog post %s now; retry later", id)
		}
		post["status"], post["published"] = "published", true
		if post["published_at"] == nil {
			post["published_at"] = ts(x.Now)
		}
		delete(post, "updated_at")
		writes = append(writes, RecordWrite{Resource: "blogs", Mode: Update, Rows: []map[string]any{post}})
		data["published_post"] = map[string]any{"id": id, "post_title": post["post_title"], "status": "published", "published_at": post["published_at"]}
	}
	// One deployment record per client, updated by each deploy.
	widget := map[string]any{
		"id": x.keyID("integrations", "blog_widget"), "name": "Blog widget", "provider": "atrium", "status": "deployed",
		"connected_at": ts(x.Now), "config": map[string]any{"client_id": x.Client.ID, "domain": x.clientDomain(), "deployed_by_run": x.RunID},
	}
	writes = append(writes, RecordWrite{Resource: "integrations", Mode: Upsert, Rows: []map[string]any{widget}})
	data["id"], data["name"], data["status"], data["deployed_at"] = widget["id"], widget["name"], widget["status"], widget["connected_at"]
	return Result{Data: data, Writes: writes}, nil
}
