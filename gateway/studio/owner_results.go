package studio

import (
	"cmp"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/atrium-hq/atrium/platform/chart"
	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
	datav1 "github.com/atrium-hq/atrium/proto/atrium/data/v1"
)

// A client member's own view: their client's datasets and finished runs,
// read with their client's id (the judge refuses any other), and nothing
// of the agency's.

// resultDatasets are the datasets a client's results may hold, as the data
// service names them (docs/datasets.md), with a heading for each. A
// dataset the data service adds fails TestResultDatasetsAreTheCatalogs
// until it has a heading here.
var resultDatasets = []struct{ Name, Label string }{
	{"keywords", "Keyword rankings"}, {"seo_reports", "Audit reports"}, {"seo_tasks", "SEO tasks"},
	{"blogs", "Blog articles"}, {"blog_categories", "Blog categories"}, {"blog_authors", "Blog authors"},
	{"blog_images", "Blog images"}, {"geo_articles", "Geo-targeted articles"}, {"topical_maps", "Topical maps"},
	{"press_releases", "Press releases"}, {"backlinks", "Backlinks"}, {"anchor_texts", "Anchor texts"},
	{"top_linked_pages", "Top linked pages"}, {"domain_metrics", "Domain metrics"},
	{"backlink_outreach", "Backlink outreach"}, {"backlink_summaries", "Backlink summaries"},
	{"citations", "Citations"}, {"gbp_profiles", "Business profiles"}, {"gbp_posts", "Business profile posts"},
	{"reviews", "Reviews"}, {"locations", "Locations"}, {"grid_searches", "Local grid searches"},
	{"competitors", "Competitors"}, {"llm_reports", "AI visibility reports"}, {"ai_summaries", "AI summaries"},
	{"ai_training", "AI training"}, {"call_tracking_calls", "Tracked calls"}, {"thirdparty_calls", "Third-party calls"},
	{"call_scores", "Call scores"}, {"call_transcriptions", "Call transcriptions"}, {"integrations", "Integrations"},
	{"action_runs", "Action runs"},
}

// datasetLabel is a dataset's heading, or "" for a name not listed.
func datasetLabel(name string) string {
	for _, d := range resultDatasets {
		if d.Name == name {
			return d.Label
		}
	}
	return ""
}

// datasetCount is a dataset with rows, for the results page's list.
type datasetCount struct {
	Name, Label string
	Rows        int32
}

// RowsText is "1 row" or "4 rows".
func (d datasetCount) RowsText() string { return plural(int(d.Rows), "row", "rows") }

// resultsData is the client member's results page.
type resultsData struct {
	Datasets []datasetCount
	// Positions is the keyword positions chart and its table; empty when
	// the client has no keyword rows.
	Positions, PositionsTable template.HTML
	HasPositions              bool
	Runs                      []*actionsv1.Run
	Reports                   reportsView
}

// ownClient is the client a client member reads for; NotFound for the
// other roles, who read clients on the clients pages.
func ownClient(v *visit) (string, error) {
	id := v.m.GetClientId().GetValue()
	if id == "" {
		return "", status.Error(codes.NotFound, "results is the page of a client's own members; the agency's people read a client's datasets on the clients pages")
	}
	return id, nil
}

func (s *Studio) resultsPage(v *visit) error {
	client, err := ownClient(v)
	if err != nil {
		return err
	}
	d := resultsData{}
	// A row of each dataset, for its count: a call per dataset, a few at
	// a time (each is one index read in the data service).
	totals, errs := make([]int32, len(resultDatasets)), make([]error, len(resultDatasets))
	var wg sync.WaitGroup
	slots := make(chan struct{}, 6)
	for i, ds := range resultDatasets {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			resp, err := call(v, datav1.DataService_ReadDataset_FullMethodName, s.data.ReadDataset,
				&datav1.ReadDatasetRequest{Resource: ds.Name, ClientId: client, Limit: new(int32(1))})
			totals[i], errs[i] = resp.GetPagination().GetTotal(), err
		})
	}
	wg.Wait()
	if err := firstErr(errs); err != nil {
		return err
	}
	for i, ds := range resultDatasets {
		if totals[i] > 0 {
			d.Datasets = append(d.Datasets, datasetCount{Name: ds.Name, Label: ds.Label, Rows: totals[i]})
		}
	}
	kw, err := call(v, datav1.DataService_ReadDataset_FullMethodName, s.data.ReadDataset,
		&datav1.ReadDatasetRequest{Resource: "keywords", ClientId: client, Limit: new(int32(1000)), Order: "tracked_at", Direction: "desc"})
	if err != nil {
		return err
	}
	if series := positionSeries(kw.GetData()); len(series) > 0 {
		o := chart.Options{Title: "Keyword positions", YLabel: "Position", InvertY: true}
		d.Positions, d.PositionsTable, d.HasPositions = chart.Line(series, o), chart.Table(series, o), true
	}
	runs, err := call(v, actionsv1.ActionsService_ListRuns_FullMethodName, s.actions.ListRuns,
		&actionsv1.ListRunsRequest{ClientId: client, Limit: new(int32(100))})
	if err != nil {
		return err
	}
	for _, r := range runs.GetRuns() {
		if r.GetFinishedAt() != nil {
			d.Runs = append(d.Runs, r)
		}
	}
	if d.Reports, err = s.reportsOf(v, client); err != nil {
		return err
	}
	s.render(v, http.StatusOK, "owner/results", View{Title: "Results"}, d)
	return nil
}

// positionSeries is a series per keyword of its position over time, the
// keywords best placed at their latest check first (Line draws the first
// chart.MaxSeries; the table lists them all).
func positionSeries(rows []*structpb.Struct) []chart.Series {
	by := map[string]*chart.Series{}
	for _, r := range rows {
		f := r.GetFields()
		kw := f["keyword"].GetStringValue()
		pos, ok := f["position"].GetKind().(*structpb.Value_NumberValue)
		if kw == "" || !ok {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, cmp.Or(f["tracked_at"].GetStringValue(), f["created_at"].GetStringValue()))
		if err != nil {
			continue
		}
		sr := by[kw]
		if sr == nil {
			sr = &chart.Series{Name: kw}
			by[kw] = sr
		}
		sr.Points = append(sr.Points, chart.Point{X: at, Y: pos.NumberValue})
	}
	out := make([]chart.Series, 0, len(by))
	for _, sr := range by {
		slices.SortFunc(sr.Points, func(a, b chart.Point) int { return a.X.Compare(b.X) })
		out = append(out, *sr)
	}
	latest := func(s chart.Series) float64 { return s.Points[len(s.Points)-1].Y }
	slices.SortFunc(out, func(a, b chart.Series) int {
		return cmp.Or(cmp.Compare(latest(a), latest(b)), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// datasetPageSize is how many rows a dataset's page shows.
const datasetPageSize = 50

// datasetData is one dataset of the client's, as a table.
type datasetData struct {
	Name, Label string
	Columns     []string
	Rows        [][]string
	Total       int32
	Page        int
	HasMore     bool
	// Bars is a chart of the dataset's scores, when its rows have one.
	Bars, BarsTable template.HTML
}

func (s *Studio) resultsDatasetPage(v *visit) error {
	client, err := ownClient(v)
	if err != nil {
		return err
	}
	name := v.r.PathValue("dataset")
	label := datasetLabel(name)
	if label == "" {
		return status.Errorf(codes.NotFound, "there is no dataset %q among your results", name)
	}
	page, _ := strconv.Atoi(v.r.URL.Query().Get("page"))
	page = max(page, 1)
	resp, err := call(v, datav1.DataService_ReadDataset_FullMethodName, s.data.ReadDataset,
		&datav1.ReadDatasetRequest{Resource: name, ClientId: client, Limit: new(int32(datasetPageSize)), Offset: new(int32(min(page-1, 10000) * datasetPageSize))})
	if err != nil {
		return err
	}
	d := datasetData{Name: name, Label: label, Total: resp.GetPagination().GetTotal(), Page: page, HasMore: resp.GetPagination().GetHasMore()}
	d.Columns, d.Rows = rowsTable(resp.GetData())
	if labels, values := scoreBars(resp.GetData()); len(labels) > 0 {
		o := chart.Options{Title: label + ": scores"}
		d.Bars, d.BarsTable = chart.Bars(labels, values, o), chart.BarsTable(labels, values, o)
	}
	s.render(v, http.StatusOK, "owner/dataset", View{Title: label, Crumbs: []Link{{Label: "Results", Href: v.path("results")}}}, d)
	return nil
}

// rowsTable lays rows out as a table: a column per field any row has,
// alphabetically with id and the times last; a cell per value, shortened.
func rowsTable(rows []*structpb.Struct) ([]string, [][]string) {
	seen := map[string]bool{}
	var cols []string
	for _, r := range rows {
		for k := range r.GetFields() {
			if !seen[k] {
				seen[k] = true
				cols = append(cols, k)
			}
		}
	}
	last := func(c string) bool { return c == "id" || c == "created_at" || c == "updated_at" }
	slices.SortFunc(cols, func(a, b string) int {
		if last(a) != last(b) {
			if last(a) {
				return 1
			}
			return -1
		}
		return strings.Compare(a, b)
	})
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = make([]string, len(cols))
		for j, c := range cols {
			out[i][j] = cellText(r.GetFields()[c])
		}
	}
	return cols, out
}

// cellText is a value as a table cell shows it: at most 120 characters.
func cellText(v *structpb.Value) string {
	var s string
	switch k := v.GetKind().(type) {
	case nil, *structpb.Value_NullValue:
		return ""
	case *structpb.Value_StringValue:
		s = k.StringValue
	case *structpb.Value_NumberValue:
		s = strconv.FormatFloat(k.NumberValue, 'f', -1, 64)
	case *structpb.Value_BoolValue:
		s = strconv.FormatBool(k.BoolValue)
	default:
		b, err := json.Marshal(v.AsInterface())
		if err != nil {
			return fmt.Sprint(v.AsInterface())
		}
		s = string(b)
	}
	if r := []rune(s); len(r) > 120 {
		s = string(r[:119]) + "…"
	}
	return s
}

// scoreBars are a dataset's scores by what they score (an audit's page),
// when its rows carry a numeric score.
func scoreBars(rows []*structpb.Struct) ([]string, []float64) {
	var labels []string
	var values []float64
	for _, r := range rows {
		f := r.GetFields()
		score, ok := f["score"].GetKind().(*structpb.Value_NumberValue)
		if !ok {
			continue
		}
		label := cmp.Or(f["url"].GetStringValue(), f["title"].GetStringValue(), f["name"].GetStringValue(), f["id"].GetStringValue())
		labels, values = append(labels, label), append(values, score.NumberValue)
	}
	return labels, values
}

// firstErr is the first error of errs (its status is the page's answer).
func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
