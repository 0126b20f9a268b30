package studio

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
)

// A client's reports (generate_report, docs/reports.md): the section of
// the client's page (owners, managers, viewers) and of a client member's
// results that lists the reports made for the client, with their HTML page
// and PDF; and, for those the judge lets manage share links (the API's
// /api/v1/report-shares RPCs), a form that makes a link, shown once, and
// the live links with a revoke button. Nothing here decides who may: the
// controls show when v.may says the RPC behind them would be allowed, and
// the actions service judges every call again.

// reportAction is the action whose successful runs are the reports.
const reportAction = "generate_report"

// reportsShown is how many of a client's newest reports the section lists.
const reportsShown = 50

// sharesShown is how many of a client's newest share links are read for
// the live ones (the API's largest page).
const sharesShown = 100

// reportItem is one generated report as the section lists it.
type reportItem struct {
	RunID, Title, From, To string
	HTML, PDF              string
	At                     time.Time
}

// shareItem is one live share link.
type shareItem struct {
	ID, Title       string
	Created, Expire time.Time
}

// reportsView is the Reports section.
type reportsView struct {
	ClientID string
	Reports  []reportItem
	// More: the client has more reports than the section lists.
	More bool
	// MayShare shows the form making a link on each report; MayList the
	// live links; MayRevoke their revoke buttons.
	MayShare, MayList, MayRevoke bool
	Live                         []shareItem
	// Error is a refused share link's message, shown by the form; Days
	// the number of days it asked for, kept.
	Error, ErrorRun, Days string
}

// DaysFor is what the days field of run's form holds: what was posted
// when that form was refused, else the default.
func (r reportsView) DaysFor(run string) string {
	if run == r.ErrorRun && r.Days != "" {
		return r.Days
	}
	return "90"
}

// reportsOf reads the client's reports and, when the person may see them,
// its live share links.
func (s *Studio) reportsOf(v *visit, client string) (reportsView, error) {
	rv := reportsView{ClientID: client,
		MayShare:  v.may(actionsv1.ReportsService_CreateShare_FullMethodName),
		MayList:   v.may(actionsv1.ReportsService_ListShares_FullMethodName),
		MayRevoke: v.may(actionsv1.ReportsService_RevokeShare_FullMethodName)}
	runs, err := call(v, actionsv1.ActionsService_ListRuns_FullMethodName, s.actions.ListRuns,
		&actionsv1.ListRunsRequest{ClientId: client, Action: reportAction, State: "success", Limit: new(int32(reportsShown))})
	if err != nil {
		return rv, err
	}
	rv.More = runs.GetNextCursor() != ""
	titles := map[string]string{}
	for _, r := range runs.GetRuns() {
		f := r.GetData().GetFields()
		period := f["period"].GetStructValue().GetFields()
		it := reportItem{RunID: r.GetId(), Title: f["title"].GetStringValue(), From: period["from"].GetStringValue(), To: period["to"].GetStringValue(),
			HTML: f["html_url"].GetStringValue(), PDF: f["pdf_url"].GetStringValue(), At: r.GetFinishedAt().AsTime()}
		if it.Title == "" {
			it.Title = "Report of " + it.From + " to " + it.To
		}
		titles[it.RunID] = it.Title
		rv.Reports = append(rv.Reports, it)
	}
	if !rv.MayList {
		return rv, nil
	}
	shares, err := call(v, actionsv1.ReportsService_ListShares_FullMethodName, s.reports.ListShares,
		&actionsv1.ListSharesRequest{ClientId: client, Limit: new(int32(sharesShown))})
	if err != nil {
		return rv, err
	}
	for _, sh := range shares.GetShares() {
		if sh.GetState() != "active" {
			continue
		}
		title := titles[sh.GetRunId()]
		if title == "" {
			title = "An older report (run " + sh.GetRunId() + ")"
		}
		rv.Live = append(rv.Live, shareItem{ID: sh.GetId(), Title: title, Created: sh.GetCreatedAt().AsTime(), Expire: sh.GetExpiresAt().AsTime()})
	}
	return rv, nil
}

// shareCreatedData is the one page that shows a share link's address.
type shareCreatedData struct {
	URL, Title, ClientID string
	Expires              time.Time
}

// createReportShare makes a share link for one of the client's reports
// and shows its address, once: the actions service keeps only its hash.
func (s *Studio) createReportShare(v *visit) error {
	client, run := v.r.PathValue("client"), v.r.PathValue("run")
	days := strings.TrimSpace(v.r.PostForm.Get("expires_in_days"))
	n, convErr := strconv.ParseInt(days, 10, 32)
	var err error
	if convErr != nil {
		err = status.Errorf(codes.InvalidArgument, "expires_in_days must be a whole number of days, 1 to 365; got %q", days)
	} else {
		var resp *actionsv1.CreateShareResponse
		resp, err = call(v, actionsv1.ReportsService_CreateShare_FullMethodName, s.reports.CreateShare,
			&actionsv1.CreateShareRequest{RunId: run, ExpiresInDays: new(int32(n))})
		if err == nil {
			sh := resp.GetShare()
			if sh.GetClientId() != client {
				// A report of another client of the agency, posted to this
				// client's address: the link is made (the agency may), and
				// shown with its own client's page to go back to.
				client = sh.GetClientId()
			}
			title := "the report"
			if rv, err := s.reportsOf(v, client); err == nil {
				for _, r := range rv.Reports {
					if r.RunID == run {
						title = r.Title
					}
				}
			}
			s.render(v, http.StatusOK, "manager/share-created", View{Title: "Share link created",
				Crumbs: []Link{{Label: "Clients", Href: v.path("clients")}, {Label: "The client", Href: v.path("clients", client)}}},
				shareCreatedData{URL: sh.GetUrl(), Title: title, ClientID: client, Expires: sh.GetExpiresAt().AsTime()})
			return nil
		}
	}
	if msg, ok := errForm(err); ok {
		return s.showClient(v, client, formStatus(err), reportsView{Error: msg, ErrorRun: run, Days: days})
	}
	return err
}

// revokeReportShare revokes a share link: the next request for it answers
// 410.
func (s *Studio) revokeReportShare(v *visit) error {
	resp, err := call(v, actionsv1.ReportsService_RevokeShare_FullMethodName, s.reports.RevokeShare,
		&actionsv1.RevokeShareRequest{Id: v.r.PathValue("share")})
	if err != nil {
		return err
	}
	v.setFlash("Revoked the share link: whoever opens it now reads that it no longer works.")
	return v.redirect(v.path("clients", resp.GetShare().GetClientId())+"#reports", "")
}
