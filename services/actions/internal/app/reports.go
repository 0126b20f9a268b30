package app

import (
	"context"
	"time"

	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

// clientRuns lists a client's runs from the store for a report's work done
// (generate_report), a page at a time, newest first, until the runs are
// older than asked.
type clientRuns struct{ store Store }

// runsPage is how many runs one store read returns.
const runsPage = 500

// ClientRuns implements action.RunLister.
func (c clientRuns) ClientRuns(ctx context.Context, agencyID, clientID string, since time.Time, max int) ([]action.RunSummary, error) {
	var out []action.RunSummary
	before := ""
	for len(out) < max {
		runs, err := c.store.ListRuns(ctx, agencyID, RunFilter{ClientID: clientID, Before: before, Limit: runsPage})
		if err != nil {
			return nil, err
		}
		for _, r := range runs {
			if r.CreatedAt.Before(since) || len(out) == max {
				return out, nil
			}
			out = append(out, action.RunSummary{Action: r.Action, Status: r.Status, AI: r.Cost.AI, Data: r.Cost.Data, At: r.CreatedAt})
		}
		if len(runs) < runsPage {
			break
		}
		before = runs[len(runs)-1].ID
	}
	return out, nil
}

// SetBranding gives the run engine the agencies' branding, which reports
// are drawn with.
func (a *Actions) SetBranding(b action.BrandingReader) { a.branding = b }

// SetLogos gives the run engine what reads the agencies' logos, which
// reports draw in their header.
func (a *Actions) SetLogos(l action.LogoReader) { a.logos = l }

// SetShares gives the run engine what makes a report's share link.
func (a *Actions) SetShares(s action.ShareMaker) { a.shares = s }
