package report

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/platform/chart"
	"github.com/atrium-hq/atrium/services/actions/internal/app/datasets"
)

// Sections of a report, in the order they are shown.
const (
	SectionRankings      = "rankings"
	SectionAudit         = "audit"
	SectionBacklinks     = "backlinks"
	SectionGBPPosts      = "gbp_posts"
	SectionLLMVisibility = "llm_visibility"
	SectionWorkDone      = "work_done"
	SectionNarrative     = "narrative"
)

// Sections lists every section, in the order a report shows them.
var Sections = []string{SectionRankings, SectionAudit, SectionBacklinks, SectionGBPPosts, SectionLLMVisibility, SectionWorkDone, SectionNarrative}

// Limits of what a report lists, so that its size does not grow with the
// client's data (the figures above each list count everything).
const (
	MaxMovers   = 10
	MaxListed   = 20
	maxBarItems = 12
)

// Sources are what the report is worked out from: the client's dataset
// rows (as the data service returns them) and the runs of the period.
type Sources struct {
	Keywords, Audits, Backlinks, GBPPosts, LLM []map[string]any
	Runs                                       []Run
}

// Run is a run of an action for the client, as the work done counts it.
type Run struct {
	Action   string
	Status   string
	AI, Data int64
	At       time.Time
}

// Figures are everything a report shows, worked out once and drawn twice
// (HTML and PDF). A nil section was not asked for.
type Figures struct {
	Title, Client, Domain string
	Period                Period
	Generated             time.Time
	Rankings              *Rankings
	Audit                 *Audit
	Backlinks             *Backlinks
	Posts                 *Posts
	LLM                   *LLM
	Work                  *Work
	// Narrative is the text provider's summary of the figures; empty when
	// the section was not asked for.
	Narrative      string
	NarrativeAsked bool
}

// Movement is one keyword's change over the period: positions at its
// start and end (0: not ranked), Change positive when it climbed.
type Movement struct {
	Keyword       string
	Before, After int
	Change        int
}

// Rankings are the tracked keywords' changes.
type Rankings struct {
	Tracked, Improved, Declined, Top10 int
	AvgBefore, AvgAfter                float64
	Winners, Losers                    []Movement
	// Trend is the average ranked position by tracking day in the period.
	Trend []chart.Point
}

// AuditPage is one audited page's latest score.
type AuditPage struct {
	URL    string
	Score  float64
	Issues int
}

// Audit is the site audit's scores.
type Audit struct {
	Pages, Issues, InPeriod int
	AvgScore                float64
	Worst                   []AuditPage
}

// Count is a label and how many.
type Count struct {
	Label string
	N     int
}

// Backlinks is the link profile at the period's end.
type Backlinks struct {
	Total, New, Domains int
	TopDomains          []Count
	NewLinks            []Link
}

// Link is one new backlink.
type Link struct {
	Source, Target string
	Authority      float64
}

// Post is one Google Business Profile post.
type Post struct {
	Title, Status, Date string
}

// Posts are the period's Google Business Profile posts.
type Posts struct {
	Count, Published int
	Listed           []Post
}

// Prompt is an answer-engine check's latest result for one prompt.
type Prompt struct {
	Prompt     string
	Mentioned  bool
	Position   int
	Visibility float64
}

// LLM is the period's answer-engine visibility.
type LLM struct {
	Checks, Mentioned int
	AvgVisibility     float64
	Prompts           []Prompt
}

// Work is what Atrium did for the client in the period.
type Work struct {
	Runs     int
	AI, Data int64
	ByAction []Count
}

// Build works the figures out of src for the sections asked (all when
// none), over period p, reading times in loc.
func Build(src Sources, sections []string, p Period, loc *time.Location) Figures {
	if len(sections) == 0 {
		sections = Sections
	}
	f := Figures{Period: p}
	for _, s := range sections {
		switch s {
		case SectionRankings:
			f.Rankings = rankings(src.Keywords, p, loc)
		case SectionAudit:
			f.Audit = audit(src.Audits, p)
		case SectionBacklinks:
			f.Backlinks = backlinks(src.Backlinks, p, loc)
		case SectionGBPPosts:
			f.Posts = posts(src.GBPPosts, p, loc)
		case SectionLLMVisibility:
			f.LLM = llm(src.LLM, p)
		case SectionWorkDone:
			f.Work = work(src.Runs, p)
		case SectionNarrative:
			f.NarrativeAsked = true
		}
	}
	return f
}

func str(row map[string]any, k string) string { s, _ := row[k].(string); return s }

func num(row map[string]any, k string) float64 {
	v, _ := row[k].(float64)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// at reads the first of the fields that holds a time: a timestamp or a
// date (read in loc).
func at(row map[string]any, loc *time.Location, fields ...string) (time.Time, bool) {
	for _, k := range fields {
		s := str(row, k)
		if s == "" {
			continue
		}
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t, true
		}
		if t, err := time.ParseInLocation(dateLayout, s, loc); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

type tracked struct {
	t   time.Time
	pos int
}

func rankings(rows []map[string]any, p Period, loc *time.Location) *Rankings {
	k := datasets.Keywords
	byKeyword := map[string][]tracked{}
	names := map[string]string{}
	daySum, dayN := map[string]float64{}, map[string]int{}
	for _, row := range rows {
		kw := strings.TrimSpace(str(row, k.Keyword))
		t, ok := at(row, loc, k.TrackedAt, k.CreatedAt)
		if kw == "" || !ok || !t.Before(p.End) {
			continue
		}
		key := strings.ToLower(kw) + "|" + strings.ToLower(str(row, k.Location))
		names[key] = kw
		pos := int(num(row, k.Position))
		byKeyword[key] = append(byKeyword[key], tracked{t, pos})
		if p.Contains(t) && pos > 0 {
			d := t.In(loc).Format(dateLayout)
			daySum[d] += float64(pos)
			dayN[d]++
		}
	}
	r := &Rankings{}
	var sumBefore, sumAfter float64
	var nBefore, nAfter int
	for key, ts := range byKeyword {
		slices.SortFunc(ts, func(a, b tracked) int { return a.t.Compare(b.t) })
		before := -1
		for i, x := range ts {
			if x.t.Before(p.Start) {
				before = i
			}
		}
		if before < 0 {
			before = 0 // first tracked in the period: its first position is the start
		}
		m := Movement{Keyword: names[key], Before: ts[before].pos, After: ts[len(ts)-1].pos}
		r.Tracked++
		if m.Before > 0 {
			sumBefore += float64(m.Before)
			nBefore++
		}
		if m.After > 0 {
			sumAfter += float64(m.After)
			nAfter++
			if m.After <= 10 {
				r.Top10++
			}
		}
		switch {
		case m.Before > 0 && m.After > 0:
			m.Change = m.Before - m.After
		case m.After > 0: // newly ranked: counted as climbing from just past 100
			m.Change = 101 - m.After
		case m.Before > 0:
			m.Change = m.Before - 101
		}
		if m.Change > 0 {
			r.Improved++
			r.Winners = append(r.Winners, m)
		} else if m.Change < 0 {
			r.Declined++
			r.Losers = append(r.Losers, m)
		}
	}
	if nBefore > 0 {
		r.AvgBefore = round1(sumBefore / float64(nBefore))
	}
	if nAfter > 0 {
		r.AvgAfter = round1(sumAfter / float64(nAfter))
	}
	byChange := func(a, b Movement) int {
		return cmp.Or(cmp.Compare(b.Change, a.Change), strings.Compare(a.Keyword, b.Keyword))
	}
	slices.SortFunc(r.Winners, byChange)
	slices.SortFunc(r.Losers, func(a, b Movement) int { return byChange(b, a) })
	r.Winners = r.Winners[:min(MaxMovers, len(r.Winners))]
	r.Losers = r.Losers[:min(MaxMovers, len(r.Losers))]
	for d, s := range daySum {
		t, _ := time.ParseInLocation(dateLayout, d, loc)
		r.Trend = append(r.Trend, chart.Point{X: t, Y: round1(s / float64(dayN[d]))})
	}
	slices.SortFunc(r.Trend, func(a, b chart.Point) int { return a.X.Compare(b.X) })
	return r
}

func audit(rows []map[string]any, p Period) *Audit {
	d := datasets.SEOReports
	latest := map[string]map[string]any{}
	when := map[string]time.Time{}
	a := &Audit{}
	for _, row := range rows {
		t, ok := at(row, time.UTC, d.FetchedAt, d.UpdatedAt, d.CreatedAt)
		u := str(row, d.URL)
		if !ok || u == "" || !t.Before(p.End) {
			continue
		}
		if p.Contains(t) {
			a.InPeriod++
		}
		if prev, ok := when[u]; !ok || t.After(prev) {
			latest[u], when[u] = row, t
		}
	}
	var sum float64
	for u, row := range latest {
		pg := AuditPage{URL: u, Score: round1(num(row, d.Score)), Issues: int(num(row, d.IssuesFound))}
		a.Pages++
		a.Issues += pg.Issues
		sum += pg.Score
		a.Worst = append(a.Worst, pg)
	}
	if a.Pages > 0 {
		a.AvgScore = round1(sum / float64(a.Pages))
	}
	slices.SortFunc(a.Worst, func(x, y AuditPage) int { return cmp.Or(cmp.Compare(x.Score, y.Score), strings.Compare(x.URL, y.URL)) })
	a.Worst = a.Worst[:min(MaxListed, len(a.Worst))]
	return a
}

func backlinks(rows []map[string]any, p Period, loc *time.Location) *Backlinks {
	d := datasets.Backlinks
	b := &Backlinks{}
	domains := map[string]int{}
	for _, row := range rows {
		t, ok := at(row, loc, d.FirstSeen, d.CreatedAt)
		if !ok || !t.Before(p.End) {
			continue
		}
		b.Total++
		dom := str(row, d.SourceDomain)
		if dom == "" {
			dom = hostOf(str(row, d.SourceURL))
		}
		domains[dom]++
		if p.Contains(t) {
			b.New++
			b.NewLinks = append(b.NewLinks, Link{Source: str(row, d.SourceURL), Target: str(row, d.TargetURL), Authority: num(row, d.DomainAuthority)})
		}
	}
	b.Domains = len(domains)
	for dom, n := range domains {
		b.TopDomains = append(b.TopDomains, Count{dom, n})
	}
	slices.SortFunc(b.TopDomains, byCount)
	b.TopDomains = b.TopDomains[:min(maxBarItems, len(b.TopDomains))]
	slices.SortFunc(b.NewLinks, func(x, y Link) int {
		return cmp.Or(cmp.Compare(y.Authority, x.Authority), strings.Compare(x.Source, y.Source))
	})
	b.NewLinks = b.NewLinks[:min(MaxListed, len(b.NewLinks))]
	return b
}

func byCount(a, b Count) int { return cmp.Or(cmp.Compare(b.N, a.N), strings.Compare(a.Label, b.Label)) }

func hostOf(u string) string {
	u = strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "http://")
	h, _, _ := strings.Cut(u, "/")
	return h
}

func posts(rows []map[string]any, p Period, loc *time.Location) *Posts {
	d := datasets.GBPPosts
	out := &Posts{}
	type dated struct {
		Post
		t time.Time
	}
	var all []dated
	for _, row := range rows {
		t, ok := at(row, loc, d.PostedAt, d.CreatedAt)
		if !ok || !p.Contains(t) {
			continue
		}
		out.Count++
		st := str(row, d.Status)
		if st == "published" {
			out.Published++
		}
		all = append(all, dated{Post{Title: str(row, d.Title), Status: st, Date: t.In(loc).Format(dateLayout)}, t})
	}
	slices.SortFunc(all, func(a, b dated) int { return a.t.Compare(b.t) })
	for _, x := range all[:min(MaxListed, len(all))] {
		out.Listed = append(out.Listed, x.Post)
	}
	return out
}

func llm(rows []map[string]any, p Period) *LLM {
	d := datasets.LLMReports
	out := &LLM{}
	latest := map[string]Prompt{}
	when := map[string]time.Time{}
	var sum float64
	for _, row := range rows {
		t, ok := at(row, time.UTC, d.ScoredAt, d.CreatedAt)
		if !ok || !p.Contains(t) {
			continue
		}
		out.Checks++
		pr := Prompt{Prompt: str(row, d.Prompt), Mentioned: row[d.Mentioned] == true, Position: int(num(row, d.Position)), Visibility: round1(num(row, d.Visibility))}
		if pr.Mentioned {
			out.Mentioned++
		}
		sum += pr.Visibility
		if prev, ok := when[pr.Prompt]; !ok || t.After(prev) {
			latest[pr.Prompt], when[pr.Prompt] = pr, t
		}
	}
	if out.Checks > 0 {
		out.AvgVisibility = round1(sum / float64(out.Checks))
	}
	for _, pr := range latest {
		out.Prompts = append(out.Prompts, pr)
	}
	slices.SortFunc(out.Prompts, func(a, b Prompt) int {
		return cmp.Or(cmp.Compare(b.Visibility, a.Visibility), strings.Compare(a.Prompt, b.Prompt))
	})
	out.Prompts = out.Prompts[:min(MaxListed, len(out.Prompts))]
	return out
}

func work(runs []Run, p Period) *Work {
	w := &Work{}
	by := map[string]int{}
	for _, r := range runs {
		if r.Status != "success" || !p.Contains(r.At) {
			continue
		}
		w.Runs++
		w.AI += r.AI
		w.Data += r.Data
		by[r.Action]++
	}
	for a, n := range by {
		w.ByAction = append(w.ByAction, Count{a, n})
	}
	slices.SortFunc(w.ByAction, byCount)
	return w
}
