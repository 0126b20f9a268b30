package studio

import (
	"net/http"

	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// homeData is the start page of an agency: its clients, its credits and
// its latest runs, each shown when the person may read it.
type homeData struct {
	Clients    []*crmv1.Client
	ClientName map[string]string
	Balance    *actionsv1.Balance
	Runs       []*actionsv1.Run
	// The parts the person may not read are left out, not shown empty.
	ShowClients, ShowCredits, ShowRuns bool
}

func (s *Studio) home(v *visit) error {
	d := homeData{ClientName: map[string]string{}}
	if d.ShowClients = v.may(crmv1.AgencyClientsService_ListClients_FullMethodName); d.ShowClients {
		resp, err := call(v, crmv1.AgencyClientsService_ListClients_FullMethodName, s.agencyClients.ListClients, &crmv1.AgencyClientsServiceListClientsRequest{})
		if err != nil {
			return err
		}
		d.Clients = resp.GetClients()
		for _, c := range d.Clients {
			d.ClientName[c.GetId()] = c.GetName()
		}
	}
	if d.ShowCredits = v.may(actionsv1.ActionsService_GetCreditBalance_FullMethodName); d.ShowCredits {
		resp, err := call(v, actionsv1.ActionsService_GetCreditBalance_FullMethodName, s.actions.GetCreditBalance, &actionsv1.GetCreditBalanceRequest{})
		if err != nil {
			return err
		}
		d.Balance = resp.GetBalance()
	}
	if d.ShowRuns = v.may(actionsv1.ActionsService_ListRuns_FullMethodName); d.ShowRuns {
		req := &actionsv1.ListRunsRequest{Limit: new(int32(10))}
		if v.m.GetClientId() != nil {
			req.ClientId = v.m.GetClientId().GetValue()
		}
		resp, err := call(v, actionsv1.ActionsService_ListRuns_FullMethodName, s.actions.ListRuns, req)
		if err != nil {
			return err
		}
		d.Runs = resp.GetRuns()
	}
	s.render(v, http.StatusOK, "home", View{Title: View{v: v}.AgencyName()}, d)
	return nil
}
