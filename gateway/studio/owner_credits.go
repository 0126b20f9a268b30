package studio

import (
	"html/template"
	"net/http"
	"time"

	"github.com/atrium-hq/atrium/platform/chart"
	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
	auditv1 "github.com/atrium-hq/atrium/proto/atrium/audit/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// The credits page sums what the agency's runs spent: the actions service
// keeps no ledger of its own beyond each run's reserved and spent credits,
// and the audit trail's credits.changed events (the operator's top-ups).
const (
	// creditsDays is the window the page sums.
	creditsDays = 30
	// creditsPages and creditsPageSize bound the runs read for it: a
	// busier agency sees the sums of its latest runs, and the page says
	// so.
	creditsPages    = 10
	creditsPageSize = 100
)

// creditsData is the credits page.
type creditsData struct {
	Balance             *actionsv1.Balance
	Days                int
	Since               time.Time
	ByAction, ByClient  []creditTally
	ActionBars, ActionT template.HTML
	ClientBars, ClientT template.HTML
	RunsRead            int
	// Truncated: the bound was reached before the window's start.
	Truncated bool
	MaxRuns   int
	// TopUps are the operator's changes to the balance in the window,
	// when the person may read the audit trail.
	TopUps     []*auditv1.AuditEvent
	ShowTopUps bool
}

// RunsText is "1 run" or "12 runs".
func (d creditsData) RunsText() string { return plural(d.RunsRead, "run", "runs") }

func (s *Studio) creditsPage(v *visit) error {
	bal, err := call(v, actionsv1.ActionsService_GetCreditBalance_FullMethodName, s.actions.GetCreditBalance, &actionsv1.GetCreditBalanceRequest{})
	if err != nil {
		return err
	}
	now := s.cfg.Now()
	d := creditsData{Balance: bal.GetBalance(), Days: creditsDays, Since: now.AddDate(0, 0, -creditsDays), MaxRuns: creditsPages * creditsPageSize}
	var runs []*actionsv1.Run
	cursor := ""
	for page := 0; ; page++ {
		if page == creditsPages {
			d.Truncated = true
			break
		}
		resp, err := call(v, actionsv1.ActionsService_ListRuns_FullMethodName, s.actions.ListRuns,
			&actionsv1.ListRunsRequest{Limit: new(int32(creditsPageSize)), Cursor: cursor})
		if err != nil {
			return err
		}
		runs = append(runs, resp.GetRuns()...)
		cursor = resp.GetNextCursor()
		// Newest first: a page that reaches before the window ends it.
		if rs := resp.GetRuns(); cursor == "" || len(rs) == 0 || rs[len(rs)-1].GetCreatedAt().AsTime().Before(d.Since) {
			break
		}
	}
	d.RunsRead = len(runs)
	clientName := map[string]string{}
	if v.may(crmv1.AgencyClientsService_ListClients_FullMethodName) {
		if resp, err := call(v, crmv1.AgencyClientsService_ListClients_FullMethodName, s.agencyClients.ListClients, &crmv1.AgencyClientsServiceListClientsRequest{}); err == nil {
			for _, c := range resp.GetClients() {
				clientName[c.GetId()] = c.GetName()
			}
		}
	}
	d.ByAction = tallyCredits(runs, d.Since, func(r *actionsv1.Run) string { return r.GetAction() })
	d.ByClient = tallyCredits(runs, d.Since, func(r *actionsv1.Run) string {
		if n := clientName[r.GetClientId()]; n != "" {
			return n
		}
		return r.GetClientId()
	})
	labels, values := barsOf(d.ByAction)
	o := chart.Options{Title: "Credits spent per action, last 30 days", Unit: "credits"}
	d.ActionBars, d.ActionT = chart.Bars(labels, values, o), chart.BarsTable(labels, values, o)
	labels, values = barsOf(d.ByClient)
	o.Title = "Credits spent per client, last 30 days"
	d.ClientBars, d.ClientT = chart.Bars(labels, values, o), chart.BarsTable(labels, values, o)
	if d.ShowTopUps = v.may(auditv1.AuditService_ListAuditEvents_FullMethodName); d.ShowTopUps {
		resp, err := call(v, auditv1.AuditService_ListAuditEvents_FullMethodName, s.audit.ListAuditEvents,
			&auditv1.ListAuditEventsRequest{ResourceType: "credits", Since: d.Since.UTC().Format(time.RFC3339), Limit: new(int32(50))})
		if err != nil {
			return err
		}
		d.TopUps = resp.GetAuditEvents()
	}
	s.render(v, http.StatusOK, "owner/credits", View{Title: "Credits"}, d)
	return nil
}
