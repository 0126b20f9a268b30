package studio

import (
	"html/template"
	"net/http"
	"net/url"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/platform/chart"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
	datav1 "github.com/atrium-hq/atrium/proto/atrium/data/v1"
)

// The account manager's pages: the agency's clients and their results
// (datasets as tables and charts), the actions with their run forms, the
// runs (live while they run) and the webhooks. Owners and managers use
// them; viewers read them without the controls that change anything (the
// judge refuses those RPCs to them, and the pages ask it first); a
// client member reaches only the runs of their client, as the judge
// allows.

// managerRoutes registers the manager's pages.
func (s *Studio) managerRoutes() {
	s.handle("GET /studio/a/{agency}/clients", s.clientsPage)
	s.handle("GET /studio/a/{agency}/clients/{client}", s.clientPage)
	s.handle("GET /studio/a/{agency}/actions", s.actionsPage)
	s.handle("GET /studio/a/{agency}/actions/{action}", s.actionPage)
	s.handle("POST /studio/a/{agency}/actions/{action}", s.runActionPost)
	s.handle("POST /studio/a/{agency}/clients/{client}/reports/{run}/shares", s.createReportShare)
	s.handle("POST /studio/a/{agency}/clients/{client}/report-shares/{share}/revoke", s.revokeReportShare)
	s.handle("GET /studio/a/{agency}/runs", s.runsPage)
	s.handle("GET /studio/a/{agency}/runs/{run}", s.runPage)
	s.handle("GET /studio/a/{agency}/runs/{run}/events", s.runEvents)
	s.handle("POST /studio/a/{agency}/runs/{run}/cancel", s.runCancel)
	s.webhookRoutes()
}

// clientsOf lists the agency's clients, as the person may see them.
func (s *Studio) clientsOf(v *visit) ([]*crmv1.Client, error) {
	resp, err := call(v, crmv1.AgencyClientsService_ListClients_FullMethodName, s.agencyClients.ListClients, &crmv1.AgencyClientsServiceListClientsRequest{})
	if err != nil {
		return nil, err
	}
	return resp.GetClients(), nil
}

// findClient is one of the agency's clients; NotFound for any other id,
// another agency's included, so that a link reveals nothing.
func (s *Studio) findClient(v *visit, id string) (*crmv1.Client, error) {
	cs, err := s.clientsOf(v)
	if err != nil {
		return nil, err
	}
	for _, c := range cs {
		if c.GetId() == id {
			return c, nil
		}
	}
	return nil, status.Errorf(codes.NotFound, "no client %q among your agency's clients", id)
}

func (s *Studio) clientsPage(v *visit) error {
	cs, err := s.clientsOf(v)
	if err != nil {
		return err
	}
	s.render(v, http.StatusOK, "manager/clients", View{Title: "Clients", Crumbs: []Link{{Label: View{v: v}.AgencyName(), Href: v.path("")}}}, struct {
		Clients []*crmv1.Client
		MayRun  bool
	}{cs, v.may(actionsRunAction)})
	return nil
}

// dataset is one of the client's datasets as the client page shows it.
type dataset struct {
	Resource, Title, Help string
	// Order is the field that orders both the chart's read and the table.
	Order string
	// Columns are the fields the table shows, in order.
	Columns []string
	// draw makes the chart from the rows read for it.
	draw func(rows []map[string]any) (svg, table template.HTML, note string)
}

// clientRowsPerPage is how many rows a dataset's table shows per page.
const clientRowsPerPage = 20

// chartRows is how many of the latest rows a chart is drawn from.
const chartRows = 1000

// clientDatasets are the datasets the client page shows, when the client
// has rows in them: those whose numbers people follow over time.
var clientDatasets = []dataset{
	{Resource: "keywords", Title: "Keyword positions", Order: "tracked_at",
		Help:    "Where the client's tracked keywords rank in search, over time; 1 is the top.",
		Columns: []string{"keyword", "position", "search_volume", "url", "tracked_at"},
		draw: func(rows []map[string]any) (template.HTML, template.HTML, string) {
			series, hidden := keywordSeries(rows)
			if len(series) == 0 {
				return "", "", ""
			}
			o := chart.Options{Title: "Keyword positions over time", YLabel: "Position", InvertY: true}
			note := ""
			if hidden > 0 {
				note = strconv.Itoa(len(series)) + " keywords with the largest search volume are drawn; " + strconv.Itoa(hidden) + " more are in the table below."
			}
			return chart.Line(series, o), chart.Table(series, o), note
		}},
	{Resource: "seo_reports", Title: "Audit scores", Order: "fetched_at",
		Help:    "The latest audit score of each page, worst first: the pages to work on.",
		Columns: []string{"url", "score", "issues_found", "status_code", "fetched_at"},
		draw: func(rows []map[string]any) (template.HTML, template.HTML, string) {
			labels, values := auditScores(rows)
			if len(labels) == 0 {
				return "", "", ""
			}
			lo, hi := 0.0, 100.0
			o := chart.Options{Title: "Latest audit score per page", YMin: &lo, YMax: &hi}
			return chart.Bars(labels, values, o), chart.BarsTable(labels, values, o), ""
		}},
	{Resource: "backlinks", Title: "Backlinks", Order: "created_at",
		Help:    "How many backlinks were known on each day one was first seen.",
		Columns: []string{"source_url", "target_url", "anchor_text", "domain_authority", "first_seen"},
		draw: func(rows []map[string]any) (template.HTML, template.HTML, string) {
			series := backlinkGrowth(rows)
			if len(series) == 0 {
				return "", "", ""
			}
			o := chart.Options{Title: "Backlinks over time", YLabel: "Backlinks"}
			return chart.Line(series, o), chart.Table(series, o), ""
		}},
	{Resource: "llm_reports", Title: "Answer-engine visibility", Order: "scored_at",
		Help:    "How visible the client's brand is in the answers of AI assistants, per engine.",
		Columns: []string{"engine", "prompt", "visibility", "mentioned", "position", "scored_at"},
		draw: func(rows []map[string]any) (template.HTML, template.HTML, string) {
			series := visibilitySeries(rows)
			if len(series) == 0 {
				return "", "", ""
			}
			o := chart.Options{Title: "Visibility over time", YLabel: "Visibility"}
			return chart.Line(series, o), chart.Table(series, o), ""
		}},
}

// datasetView is a dataset with what was read of it.
type datasetView struct {
	dataset
	Chart, ChartTable template.HTML
	Note              string
	Rows              [][]string
	Total, From, To   int
	Prev, Next        string
}

func (s *Studio) clientPage(v *visit) error {
	return s.showClient(v, v.r.PathValue("client"), http.StatusOK, reportsView{})
}

// showClient draws the client's page with code; refused carries a share
// link form's refusal (its message and what was posted), shown by the
// form.
func (s *Studio) showClient(v *visit, id string, code int, refused reportsView) error {
	c, err := s.findClient(v, id)
	if err != nil {
		return err
	}
	reports, err := s.reportsOf(v, c.GetId())
	if err != nil {
		return err
	}
	reports.Error, reports.ErrorRun, reports.Days = refused.Error, refused.ErrorRun, refused.Days
	var views []datasetView
	for _, d := range clientDatasets {
		dv, err := s.readDataset(v, c.GetId(), d)
		if err != nil {
			return err
		}
		if dv.Total > 0 {
			views = append(views, dv)
		}
	}
	s.render(v, code, "manager/client", View{Title: c.GetName(), Crumbs: []Link{
		{Label: View{v: v}.AgencyName(), Href: v.path("")}, {Label: "Clients", Href: v.path("clients")}}},
		struct {
			Client   *crmv1.Client
			Datasets []datasetView
			MayRun   bool
			Reports  reportsView
		}{c, views, v.may(actionsRunAction), reports})
	return nil
}

// readDataset reads a dataset for the client page: the latest rows for
// its chart and the page of its table the address asks for
// (?<resource>=offset).
func (s *Studio) readDataset(v *visit, client string, d dataset) (datasetView, error) {
	dv := datasetView{dataset: d}
	// An offset that is not a number of rows is the first page.
	off64, _ := strconv.ParseInt(v.r.URL.Query().Get(d.Resource), 10, 32)
	offset := int32(max(off64, 0))
	page, err := call(v, datav1.DataService_ReadDataset_FullMethodName, s.data.ReadDataset, &datav1.ReadDatasetRequest{
		Resource: d.Resource, ClientId: client, Limit: new(int32(clientRowsPerPage)), Offset: new(offset), Order: d.Order, Direction: "desc"})
	if err != nil {
		return dv, err
	}
	dv.Total = int(page.GetPagination().GetTotal())
	if dv.Total == 0 {
		return dv, nil
	}
	for _, row := range page.GetData() {
		m := row.AsMap()
		cells := make([]string, len(d.Columns))
		for i, col := range d.Columns {
			cells[i] = cell(m[col])
		}
		dv.Rows = append(dv.Rows, cells)
	}
	dv.From, dv.To = int(offset)+1, int(offset)+len(dv.Rows)
	link := func(off int32) string {
		q := v.r.URL.Query()
		q.Set(d.Resource, strconv.Itoa(int(off)))
		return v.path("clients", client) + "?" + q.Encode() + "#" + url.PathEscape(d.Resource)
	}
	if offset > 0 {
		dv.Prev = link(max(offset-clientRowsPerPage, 0))
	}
	if page.GetPagination().GetHasMore() {
		dv.Next = link(offset + clientRowsPerPage)
	}
	all, err := call(v, datav1.DataService_ReadDataset_FullMethodName, s.data.ReadDataset, &datav1.ReadDatasetRequest{
		Resource: d.Resource, ClientId: client, Limit: new(int32(chartRows)), Order: d.Order, Direction: "desc"})
	if err != nil {
		return dv, err
	}
	rows := make([]map[string]any, 0, len(all.GetData()))
	for _, r := range all.GetData() {
		rows = append(rows, r.AsMap())
	}
	dv.Chart, dv.ChartTable, dv.Note = d.draw(rows)
	return dv, nil
}
