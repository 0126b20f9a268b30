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
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// The link-building actions: the backlink profile, and outreach to
// prospect sites (drafted, then sent).

// FetchBacklinks is fetch_backlinks: the client's backlink profile,
// recorded as backlinks, anchor texts, linked pages and domain metrics.
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
	for _, b := range p.Backlinks {
		links = append(links, map[string]any{
			"id": keyID(x, "backlinks", b.SourceURL+"|"+b.TargetURL), "source_url": b.SourceURL, "target_url": b.TargetURL,
			"anchor_text": b.AnchorText, "source_type": b.SourceType, "source_id": b.SourceDomain, "source_domain": b.SourceDomain,
			"domain_authority": b.DomainAuthority, "external_pages": float64(b.ExternalPages), "linking_domains": float64(b.LinkingDomains),
			"first_seen": b.FirstSeen.UTC().Format("2006-01-02"), "nofollow": b.NoFollow,
		})
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
			"id": keyID(x, "anchor_texts", a), "anchor": a, "count": float64(anchors[a]),
			"percentage": math.Round(1000*float64(anchors[a])/float64(max(1, len(p.Backlinks)))) / 10, "source_id": domain,
		})
	}
	for _, u := range slices.Sorted(maps.Keys(pages)) {
		pageRows = append(pageRows, map[string]any{
			"id": keyID(x, "top_linked_pages", u), "url": u, "linking_domains": float64(len(pages[u].domains)), "external_pages": float64(pages[u].links),
		})
	}
	metrics := map[string]any{
		"id": keyID(x, "domain_metrics", domain), "domain": domain, "domain_authority": p.DomainAuthority, "page_authority": p.PageAuthority,
		"spam_score": p.SpamScore, "backlinks": float64(len(p.Backlinks)), "linking_domains": float64(len(sources)), "fetched_at": ts(x.Now),
	}
	top := slices.SortedFunc(maps.Keys(anchors), func(a, b string) int { return cmp.Or(cmp.Compare(anchors[b], anchors[a]), strings.Compare(a, b)) })
	var topAnchors []any
	for _, a := range top[:min(5, len(top))] {
		topAnchors = append(topAnchors, a)
	}
	data := map[string]any{
		"id": metrics["id"], "domain": domain, "source": x.P.Search.Source(), "backlinks": metrics["backlinks"],
		"linking_domains": metrics["linking_domains"], "domain_authority": p.DomainAuthority, "page_authority": p.PageAuthority,
		"spam_score": p.SpamScore, "top_anchors": orEmpty(topAnchors), "fetched_at": metrics["fetched_at"],
	}
	writes := []action.RecordWrite{{Resource: "domain_metrics", Mode: action.Upsert, Rows: []map[string]any{metrics}}}
	for _, w := range []action.RecordWrite{
		{Resource: "backlinks", Mode: action.Upsert, Rows: links},
		{Resource: "anchor_texts", Mode: action.Upsert, Rows: anchorRows},
		{Resource: "top_linked_pages", Mode: action.Upsert, Rows: pageRows},
	} {
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
	row := map[string]any{
		"id": newID(x, "backlink_outreach", 0), "target_domain": domain, "prospect_url": prospect,
		"subject": clip(oneLine(t.Fields["subject"]), 200), "body": t.Fields["body"], "status": "drafted",
		"notes": "Drafted by generate_outreach_email",
	}
	return action.Result{Data: withModel(row, t.Model), Writes: []action.RecordWrite{{Resource: "backlink_outreach", Mode: action.Upsert, Rows: []map[string]any{row}}}}, nil
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
	row := map[string]any{
		"id": newID(x, "backlink_outreach", 0), "target_domain": strings.ToLower(domain), "contact_email": to,
		"subject": subject, "body": html, "status": "sent", "sent_at": ts(x.Now), "message_id": sent.MessageID,
		"notes": "Sent by send_prospect_email from " + sent.From,
	}
	data := map[string]any{"id": row["id"], "to": to, "from": sent.From, "subject": subject, "status": "sent", "message_id": sent.MessageID, "sent_at": row["sent_at"]}
	return action.Result{Data: data, Writes: []action.RecordWrite{{Resource: "backlink_outreach", Mode: action.Upsert, Rows: []map[string]any{row}}}}, nil
}
