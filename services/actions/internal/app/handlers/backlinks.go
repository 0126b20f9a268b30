package handlers

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/datasets"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// The link-building actions: the backlink profile, and outreach to
// prospect sites (drafted, then sent).

// FetchBacklinks is fetch_backlinks: the client's backlink profile,
// recorded as backlinks, anchor texts, linked pages and domain metrics. The
// domain's totals are the provider's counts of every link; the rows are
// the links it lists (a commercial provider lists the strongest hundred,
// not every one), and the anchors and pages are tallied from those.
func FetchBacklinks(ctx context.Context, x *action.Exec) (action.Result, error) {
	domain := clientDomain(x)
	if domain == "" {
		return action.Result{}, provider.Failure("backlink data", 422, nil, "client %s has no domain to look up backlinks for; an administrator sets it", x.Client.ID)
	}
	p, err := x.P.Search.Backlinks(ctx, domain)
	if err != nil {
		return action.Result{}, err
	}
	// Every record is keyed by what it describes, so that a refresh
	// replaces it rather than adding another.
	var links []map[string]any
	anchors := map[string]int{}
	type page struct {
		links   int
		domains map[string]bool
	}
	pages := map[string]*page{}
	sources := map[string]bool{}
	bl, an, tp, dm := datasets.Backlinks, datasets.AnchorTexts, datasets.TopLinkedPages, datasets.DomainMetrics
	source := x.P.Search.Source()
	fetched := ts(provider.MeasuredAt(ctx, x.Now))
	for _, b := range p.Backlinks {
		link := map[string]any{
			bl.ID: keyID(x, bl.Resource, b.SourceURL+"|"+b.TargetURL), bl.SourceURL: b.SourceURL, bl.TargetURL: b.TargetURL,
			bl.AnchorText: b.AnchorText, bl.SourceType: b.SourceType, bl.SourceID: b.SourceDomain, bl.SourceDomain: b.SourceDomain,
			bl.DomainAuthority: b.DomainAuthority, bl.ExternalPages: float64(b.ExternalPages),
			bl.FirstSeen: b.FirstSeen.UTC().Format("2006-01-02"), bl.Nofollow: b.NoFollow, bl.Source: source,
		}
		if b.LinkingDomains != provider.NoFigure {
			link[bl.LinkingDomains] = float64(b.LinkingDomains)
		}
		links = append(links, link)
		anchors[b.AnchorText]++
		pg := pages[b.TargetURL]
		if pg == nil {
			pg = &page{domains: map[string]bool{}}
			pages[b.TargetURL] = pg
		}
		pg.links++
		pg.domains[b.SourceDomain] = true
		sources[b.SourceDomain] = true
	}
	var anchorRows, pageRows []map[string]any
	for _, a := range slices.Sorted(maps.Keys(anchors)) {
		anchorRows = append(anchorRows, map[string]any{
			an.ID: keyID(x, an.Resource, a), an.Anchor: a, an.Count: float64(anchors[a]),
			an.Percentage: math.Round(1000*float64(anchors[a])/float64(max(1, len(p.Backlinks)))) / 10, an.SourceID: domain,
		})
	}
	for _, u := range slices.Sorted(maps.Keys(pages)) {
		pageRows = append(pageRows, map[string]any{
			tp.ID: keyID(x, tp.Resource, u), tp.URL: u, tp.LinkingDomains: float64(len(pages[u].domains)), tp.ExternalPages: float64(pages[u].links),
		})
	}
	metrics := map[string]any{
		dm.ID: keyID(x, dm.Resource, domain), dm.Domain: domain, dm.DomainAuthority: p.DomainAuthority, dm.PageAuthority: p.PageAuthority,
		dm.SpamScore: p.SpamScore, dm.Backlinks: float64(max(p.Total, len(p.Backlinks))), dm.LinkingDomains: float64(max(p.ReferringDomains, len(sources))),
		dm.FetchedAt: fetched, dm.Source: source,
	}
	top := slices.SortedFunc(maps.Keys(anchors), func(a, b string) int { return cmp.Or(cmp.Compare(anchors[b], anchors[a]), strings.Compare(a, b)) })
	var topAnchors []any
	for _, a := range top[:min(5, len(top))] {
		topAnchors = append(topAnchors, a)
	}
	data := map[string]any{
		"id": metrics[dm.ID], "domain": domain, "source": source, "backlinks": metrics[dm.Backlinks], "listed": float64(len(links)),
		"linking_domains": metrics[dm.LinkingDomains], "domain_authority": p.DomainAuthority, "page_authority": p.PageAuthority,
		"spam_score": p.SpamScore, "top_anchors": orEmpty(topAnchors), "fetched_at": metrics[dm.FetchedAt],
	}
	writes := []action.RecordWrite{upsert(dm.Resource, metrics)}
	for _, w := range []action.RecordWrite{upsert(bl.Resource, links...), upsert(an.Resource, anchorRows...), upsert(tp.Resource, pageRows...)} {
		if len(w.Rows) > 0 {
			writes = append(writes, w)
		}
	}
	return action.Result{Data: data, Writes: writes}, nil
}

// GenerateOutreachEmail is generate_outreach_email: an outreach email to
// a prospect site, recorded in the outreach pipeline as drafted.
func GenerateOutreachEmail(ctx context.Context, x *action.Exec) (action.Result, error) {
	prospect, tone := x.Input.Str("prospectUrl"), x.Input.Str("tone")
	domain := hostOf(prospect)
	t, err := write(ctx, x, provider.TextOutreachEmail,
		fmt.Sprintf("Write a short, personal outreach email from %s (%s) to the site %s proposing a collaboration (a guest post, a resource link or a partnership), in a %s tone.", clientName(x), clientDomain(x), domain, tone),
		map[string]string{"prospect_url": prospect, "prospect_domain": domain, "tone": tone, "client_name": clientName(x), "client_domain": clientDomain(x)},
		provider.TextField{Name: "subject", Description: "the subject line, under 70 characters"},
		provider.TextField{Name: "body", Description: "the email as plain text, under 200 words, with a greeting and a sign-off"})
	if err != nil {
		return action.Result{}, err
	}
	d := datasets.BacklinkOutreach
	row := map[string]any{
		d.ID: newID(x, d.Resource, 0), d.TargetDomain: domain, d.ProspectURL: prospect,
		d.Subject: clip(oneLine(t.Fields["subject"]), 200), d.Body: t.Fields["body"], d.Status: "drafted",
		d.Notes: "Drafted by generate_outreach_email",
	}
	return action.Result{Data: withModel(row, t.Model), Writes: []action.RecordWrite{upsert(d.Resource, row)}}, nil
}

// SendProspectEmail is send_prospect_email: an email sent over the mailer,
// recorded in the outreach pipeline as sent.
func SendProspectEmail(ctx context.Context, x *action.Exec) (action.Result, error) {
	to, subject, html := x.Input.Str("to"), x.Input.Str("subject"), x.Input.Str("html")
	sent, err := x.P.Mail.Send(ctx, provider.Mail{To: to, Subject: subject, HTML: html})
	if err != nil {
		return action.Result{}, err
	}
	_, domain, _ := strings.Cut(to, "@")
	d := datasets.BacklinkOutreach
	row := map[string]any{
		d.ID: newID(x, d.Resource, 0), d.TargetDomain: strings.ToLower(domain), d.ContactEmail: to,
		d.Subject: subject, d.Body: html, d.Status: "sent", d.SentAt: ts(x.Now), d.MessageID: sent.MessageID,
		d.Notes: "Sent by send_prospect_email from " + sent.From,
	}
	data := map[string]any{"id": row[d.ID], "to": to, "from": sent.From, "subject": subject, "status": "sent", "message_id": sent.MessageID, "sent_at": row[d.SentAt]}
	return action.Result{Data: data, Writes: []action.RecordWrite{upsert(d.Resource, row)}}, nil
}
