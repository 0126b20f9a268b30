package handlers

import (
	"context"
	"fmt"
	"html"
	"strconv"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/platform/publicfile"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/datasets"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
	"github.com/atrium-hq/atrium/services/actions/internal/app/report"
)

// The client report: figures read from what Atrium holds for the client,
// a narrative from the text provider, an HTML page and a PDF on the blob
// store.

// MaxReportRows bounds the rows a report reads of one dataset: a year of
// weekly positions for 1,000 keywords is 52,000.
const MaxReportRows = 200_000

// MaxReportRuns bounds the runs a report counts.
const MaxReportRuns = 10_000

// DefaultShareDays is how long a report's share link works unless the run
// asks otherwise (share_ttl_days).
const DefaultShareDays = 90

// MaxReportRecipients bounds email_to: a report goes to the client's
// people, not to a mailing list.
const MaxReportRecipients = 20

// DefaultAgencyName signs a report whose agency set no branding.
const DefaultAgencyName = "Atrium"

// resources are the datasets each section reads.
var reportResources = map[string]string{
	report.SectionRankings:      datasets.Keywords.Resource,
	report.SectionAudit:         datasets.SEOReports.Resource,
	report.SectionBacklinks:     datasets.Backlinks.Resource,
	report.SectionGBPPosts:      datasets.GBPPosts.Resource,
	report.SectionLLMVisibility: datasets.LLMReports.Resource,
}

// GenerateReport is generate_report: the client's report for a period, as
// an HTML page and a PDF kept on the blob store, their URLs in the run's
// data.
func GenerateReport(ctx context.Context, x *action.Exec) (action.Result, error) {
	spec, _ := x.Input["period"].(report.PeriodSpec)
	tz := x.Input.Str("timezone")
	if tz == "" {
		tz = "UTC"
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return action.Result{}, provider.Failure("report", 400, err, "timezone %q is not a time zone", tz)
	}
	sections := x.Input.Strs("sections")
	if len(sections) == 0 {
		sections = report.Sections
	}
	period := report.Resolve(spec, x.Now, loc)
	src, err := reportSources(ctx, x, sections, period)
	if err != nil {
		return action.Result{}, err
	}
	f := report.Build(src, sections, period, loc)
	f.Client, f.Domain, f.Generated = x.Client.Name, x.Client.Domain, x.Now.In(loc)
	f.Title = x.Input.Str("title")
	if f.Title == "" {
		f.Title = x.Client.Name + " report, " + period.Label
	}
	model := ""
	if f.NarrativeAsked {
		t, err := x.P.Text.Generate(ctx, provider.TextRequest{
			Kind: provider.TextReportNarrative,
			Instructions: "Write a short summary (two or three paragraphs, plain text) of an SEO agency's monthly report for its client, from these figures only. " +
				"Do not invent any number, name or cause that the figures do not give.",
			Inputs: map[string]string{"client_name": x.Client.Name, "period": period.Label, "facts": strings.Join(facts(f), "\n")},
			Fields: []provider.TextField{{Name: "narrative", Description: "the summary, paragraphs separated by a blank line"}},
		})
		if err != nil {
			return action.Result{}, err
		}
		f.Narrative, model = strings.TrimSpace(t.Fields["narrative"]), t.Model
	}
	brand := report.Branding{Name: DefaultAgencyName}
	if x.Branding != nil {
		b, ok, err := x.Branding.Branding(ctx, x.AgencyID)
		if err != nil {
			return action.Result{}, fmt.Errorf("read the agency's branding: %w", err)
		}
		if ok {
			brand = report.Branding{Name: b.Name, Primary: b.Primary, Accent: b.Accent}
			brand.Logo = reportLogo(ctx, x, b.LogoAssetID)
		}
	}
	page, err := report.HTML(f, brand)
	if err != nil {
		return action.Result{}, fmt.Errorf("render the report's HTML: %w", err)
	}
	pdf, err := report.PDF(f, brand)
	if err != nil {
		return action.Result{}, fmt.Errorf("render the report's PDF: %w", err)
	}
	htmlName, pdfName := publicfile.NewName("html"), publicfile.NewName("pdf")
	if err := x.P.Blobs.Put(ctx, htmlName, publicfile.HTMLType, page); err != nil {
		return action.Result{}, fmt.Errorf("store the report's HTML: %w", err)
	}
	if err := x.P.Blobs.Put(ctx, pdfName, "application/pdf", pdf); err != nil {
		return action.Result{}, fmt.Errorf("store the report's PDF: %w", err)
	}
	data := map[string]any{
		"title": f.Title, "client_id": x.Client.ID, "period": map[string]any{"from": period.First, "to": period.Last},
		"timezone": tz, "sections": stringsAny(sections), "agency_name": brand.Name,
		"html_url": x.P.MediaURL(htmlName), "pdf_url": x.P.MediaURL(pdfName),
		"html_bytes": float64(len(page)), "pdf_bytes": float64(len(pdf)),
		"figures": summary(f),
	}
	if model != "" {
		data["model"] = model
	}
	if x.Shares != nil {
		days := x.Input.Int("share_ttl_days")
		if days <= 0 {
			days = DefaultShareDays
		}
		url, err := x.Shares.MakeShare(ctx, action.Share{AgencyID: x.AgencyID, ClientID: x.Client.ID, RunID: x.RunID, HTMLName: htmlName, PDFName: pdfName,
			CreatedAt: x.Now}, time.Duration(days)*24*time.Hour)
		if err != nil {
			return action.Result{}, fmt.Errorf("make the report's share link: %w", err)
		}
		data["share_url"] = url
	}
	if to := x.Input.Strs("email_to"); len(to) > 0 {
		if err := mailReport(ctx, x, to, f.Title, brand.Name, data); err != nil {
			return action.Result{}, err
		}
		data["emailed_to"] = stringsAny(to)
	}
	return action.Result{Data: data}, nil
}

// reportLogo reads the branding's logo, nil when there is none to draw:
// no logo set, no reader, or an asset that is gone, another agency's, too
// large or unreadable. A logo never fails a report (it is then signed
// with the name only), so the error is dropped here on purpose; the
// renderings also leave out bytes that are not a PNG or JPEG image.
func reportLogo(ctx context.Context, x *action.Exec, assetID string) []byte {
	if assetID == "" || x.Logos == nil {
		return nil
	}
	b, _, err := x.Logos.AgencyAssetFile(ctx, x.AgencyID, assetID, action.MaxLogoBytes)
	if err != nil {
		return nil
	}
	return b
}

// mailReport sends the report's links to each recipient, one message each
// (no recipient sees the others' addresses). The link is the share link
// when there is one: it can be revoked, and it expires.
func mailReport(ctx context.Context, x *action.Exec, to []string, title, agency string, data map[string]any) error {
	link, _ := data["share_url"].(string)
	if link == "" {
		link, _ = data["html_url"].(string)
	}
	pdf, _ := data["pdf_url"].(string)
	body := "<p>" + html.EscapeString(agency) + " has prepared your report: <strong>" + html.EscapeString(title) + "</strong>.</p>" +
		`<p><a href="` + html.EscapeString(link) + `">Open the report</a> · <a href="` + html.EscapeString(pdf) + `">Download it as a PDF</a></p>`
	for _, addr := range to {
		if _, err := x.P.Mail.Send(ctx, provider.Mail{To: addr, Subject: title, HTML: body}); err != nil {
			return fmt.Errorf("email the report to %s: %w", addr, err)
		}
	}
	return nil
}

func stringsAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// reportSources reads the rows of the sections asked for and the runs of
// the period.
func reportSources(ctx context.Context, x *action.Exec, sections []string, p report.Period) (report.Sources, error) {
	var src report.Sources
	targets := map[string]*[]map[string]any{
		datasets.Keywords.Resource: &src.Keywords, datasets.SEOReports.Resource: &src.Audits, datasets.Backlinks.Resource: &src.Backlinks,
		datasets.GBPPosts.Resource: &src.GBPPosts, datasets.LLMReports.Resource: &src.LLM,
	}
	for _, s := range sections {
		if s == report.SectionWorkDone {
			runs, err := x.Runs.ClientRuns(ctx, x.AgencyID, x.Client.ID, p.Start, MaxReportRuns)
			if err != nil {
				return src, fmt.Errorf("read the client's runs: %w", err)
			}
			for _, r := range runs {
				src.Runs = append(src.Runs, report.Run{Action: r.Action, Status: r.Status, AI: r.AI, Data: r.Data, At: r.At})
			}
			continue
		}
		res, ok := reportResources[s]
		if !ok {
			continue
		}
		rows, _, err := x.Datasets.ListRecords(ctx, x.Client.ID, res, MaxReportRows)
		if err != nil {
			return src, fmt.Errorf("read the client's %s: %w", res, err)
		}
		*targets[res] = rows
	}
	return src, nil
}

// facts are the figures as the narrative is written from them, one per
// line: only what the report shows.
func facts(f report.Figures) []string {
	var out []string
	add := func(label string, v any) { out = append(out, fmt.Sprintf("%s: %v", label, v)) }
	if r := f.Rankings; r != nil {
		add("Keywords tracked", r.Tracked)
		if r.Tracked > 0 {
			add("Average position", report.Num(r.AvgBefore)+" at the start, "+report.Num(r.AvgAfter)+" at the end")
			add("Keywords that improved", r.Improved)
			add("Keywords that declined", r.Declined)
			add("Keywords in the top 10", r.Top10)
		}
		if len(r.Winners) > 0 {
			w := r.Winners[0]
			add("Biggest climb", fmt.Sprintf("%q, %s positions", w.Keyword, signedInt(w.Change)))
		}
	}
	if a := f.Audit; a != nil && a.Pages > 0 {
		add("Pages audited", a.Pages)
		add("Average audit score", report.Num(a.AvgScore)+" out of 100")
		add("Audit issues open", a.Issues)
	}
	if b := f.Backlinks; b != nil {
		add("Backlinks", b.Total)
		add("New backlinks this period", b.New)
		add("Referring domains", b.Domains)
	}
	if p := f.Posts; p != nil {
		add("Google Business Profile posts this period", p.Count)
	}
	if l := f.LLM; l != nil && l.Checks > 0 {
		add("Answer-engine checks", l.Checks)
		add("Answers naming the brand", l.Mentioned)
		add("Average answer-engine visibility", report.Num(l.AvgVisibility)+" out of 100")
	}
	if w := f.Work; w != nil {
		add("Actions run for the client", w.Runs)
	}
	return out
}

func signedInt(n int) string {
	if n > 0 {
		return "+" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// summary is the figures as the run's data carries them: the headline
// numbers of each section, for a caller that wants them without the files.
func summary(f report.Figures) map[string]any {
	out := map[string]any{}
	if r := f.Rankings; r != nil {
		out["rankings"] = map[string]any{"tracked": float64(r.Tracked), "improved": float64(r.Improved), "declined": float64(r.Declined), "top10": float64(r.Top10), "average_position_start": r.AvgBefore, "average_position_end": r.AvgAfter}
	}
	if a := f.Audit; a != nil {
		out["audit"] = map[string]any{"pages": float64(a.Pages), "average_score": a.AvgScore, "issues": float64(a.Issues)}
	}
	if b := f.Backlinks; b != nil {
		out["backlinks"] = map[string]any{"total": float64(b.Total), "new": float64(b.New), "referring_domains": float64(b.Domains)}
	}
	if p := f.Posts; p != nil {
		out["gbp_posts"] = map[string]any{"count": float64(p.Count), "published": float64(p.Published)}
	}
	if l := f.LLM; l != nil {
		out["llm_visibility"] = map[string]any{"checks": float64(l.Checks), "mentioned": float64(l.Mentioned), "average_visibility": l.AvgVisibility}
	}
	if w := f.Work; w != nil {
		out["work_done"] = map[string]any{"runs": float64(w.Runs), "credits_ai": float64(w.AI), "credits_data": float64(w.Data)}
	}
	return out
}
