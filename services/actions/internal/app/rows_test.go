package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/objstore/localdir"
	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/builtintext"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/indexnow"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/mediastore"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/pngimage"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/syntheticseo"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/web"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/catalog"
	"github.com/atrium-hq/atrium/services/actions/internal/app/datasets"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// The rows the actions write are the data service's to validate, and it
// refuses a field its catalog does not declare or a value of another type,
// with the whole write. This test runs every action of the catalog on the
// built-in providers (and the web fetcher and IndexNow adapter against
// local servers) and checks every row it writes, action_runs included,
// against the data catalog as generated into package datasets.

// writes records what the data service was asked to write, and answers
// reads from it (deploy_blog reads the post it publishes).
type writes struct {
	mu     sync.Mutex
	writes []action.RecordWrite
	taken  int
}

func (w *writes) WriteRecords(_ context.Context, _ string, ws []action.RecordWrite) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, ws...)
	return nil
}

func (w *writes) GetRecord(_ context.Context, _, resource, id string) (map[string]any, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, wr := range slices.Backward(w.writes) {
		for _, row := range wr.Rows {
			if wr.Resource == resource && row["id"] == id {
				out := make(map[string]any, len(row))
				for k, v := range row {
					out[k] = v
				}
				return out, nil
			}
		}
	}
	return nil, store.ErrNotFound
}

// take returns the writes since the last take.
func (w *writes) take() []action.RecordWrite {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.writes[w.taken:]
	w.taken = len(w.writes)
	return out
}

// sentMail stands in for an SMTP server: the row records what it accepted.
type sentMail struct{}

func (sentMail) Send(_ context.Context, m provider.Mail) (provider.SentMail, error) {
	return provider.SentMail{MessageID: "<" + uuid.NewString() + "@atrium.test>", From: "seo@agency.example"}, nil
}

// auditedPage is a page worth auditing: some checks pass, some fail.
const auditedPage = `<!DOCTYPE html><html lang="en"><head><title>Sourdough starter: a guide</title>
<meta name="description" content="How to make and keep a sourdough starter.">
<link rel="canonical" href="/starter"></head><body><h1>Sourdough starter</h1>
<p>Flour and water, fed daily.</p><img src="/jar.png"><a href="/bread">Bread</a></body></html>`

func TestEveryActionWritesTheDataCatalogsFields(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, auditedPage)
	}))
	t.Cleanup(site.Close)
	indexNow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) }))
	t.Cleanup(indexNow.Close)

	pages, err := web.New(web.Config{AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	index, err := indexnow.New(indexnow.Config{Endpoint: indexNow.URL, Key: "0123456789abcdef"})
	if err != nil {
		t.Fatal(err)
	}
	images, err := pngimage.New(pngimage.Config{})
	if err != nil {
		t.Fatal(err)
	}
	objects, err := localdir.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	blobs := mediastore.New(objects)
	search, err := syntheticseo.New(syntheticseo.Config{})
	if err != nil {
		t.Fatal(err)
	}
	p := &action.Providers{Text: builtintext.New(), Pages: pages, Mail: sentMail{}, Index: index, Images: images, Blobs: blobs, Search: search,
		MediaURL: func(name string) string { return "https://atrium.example/media/" + name }}

	agency := uuid.NewString()
	client := action.Client{ID: uuid.NewString(), Name: "Rye & Co", Domain: "https://www.rye.example/", AutoDeploy: true}
	dir := &directory{links: map[string]action.Client{agency + "|" + client.ID: client}}
	rec := &writes{}
	clock := app.Clock(func() time.Time { return time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC) })
	actions := app.NewActions(memory.New(memdb.New(nil)), dir, rec, p, clock, app.Config{AllowPrivateFetch: true},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if _, err := actions.AddCredits(t.Context(), agency, 1000, 1000); err != nil {
		t.Fatal(err)
	}

	// deploy_blog publishes the post generate_blog wrote before it.
	var blogID string
	samples := map[string]map[string]any{
		"seo_audit":               {"url": site.URL + "/starter"},
		"optimize_page":           {"url": site.URL + "/starter", "keyword": "sourdough starter"},
		"generate_keywords":       {"seed": "sourdough", "location": "Leeds"},
		"generate_topical_map":    {"topic": "home baking", "depth": 3.0},
		"generate_blog":           {"keyword": "sourdough starter", "category_id": "baking"},
		"generate_blog_image":     {"title": "Sourdough at home", "style": "bold"},
		"generate_geo_article":    {"keyword": "bakery", "city": "Leeds", "state": "West Yorkshire", "category_id": "local"},
		"generate_press_release":  {"headline": "Rye & Co opens a second shop", "body_points": []any{"Opens in May", "Ten jobs"}},
		"generate_gbp_post":       {"topic": "Weekend sourdough class", "cta": "book"},
		"deploy_blog":             {},
		"index_url":               {"url": "https://rye.example/starter"},
		"fetch_backlinks":         {},
		"generate_outreach_email": {"prospectUrl": "https://bakingblog.example/"},
		"send_prospect_email":     {"to": "editor@bakingblog.example", "subject": "A guest post", "html": "<p>Hello</p>"},
		"run_grid_search":         {"keyword": "bakery", "lat": 53.8, "lng": -1.55, "radius": 3.0},
		"run_llm_visibility":      {"prompt": "Best bakery in Leeds?", "brand_name": "Rye & Co", "competitors": []any{"Crust"}},
		"generate_report":         {"period": map[string]any{"from": "2026-11-01", "to": "2026-11-30"}, "timezone": "Europe/London"},
		"score_call":              {"transcript": "Thanks for calling. I'd like a quote for a wedding cake today.", "call_id": "c-1"},
	}
	for _, act := range catalog.All() {
		body, ok := samples[act.Name]
		if !ok {
			t.Errorf("%s has no sample request here: add one, so that its rows are checked", act.Name)
			continue
		}
		t.Run(act.Name, func(t *testing.T) {
			body["action"], body["client_id"] = act.Name, client.ID
			if act.Name == "deploy_blog" {
				body["post_id"] = blogID
			}
			out, err := actions.Run(t.Context(), agency, body, "")
			if err != nil || out.Run.Status != app.StatusSuccess {
				t.Fatalf("run: %+v, %v", out.Run, err)
			}
			if act.Name == "generate_blog" {
				blogID = out.Run.Data["id"].(string)
			}
			written := map[string]int{}
			for _, w := range rec.take() {
				d, ok := datasets.Lookup(w.Resource)
				if !ok || d.Resource == datasets.Clients.Resource {
					t.Errorf("wrote to %q, which is not a dataset the data service stores", w.Resource)
					continue
				}
				for i, row := range w.Rows {
					for _, msg := range rowProblems(d, row) {
						t.Errorf("%s row %d: %s", w.Resource, i, msg)
					}
				}
				written[w.Resource] += len(w.Rows)
			}
			if written[act.Writes] == 0 || written[datasets.ActionRuns.Resource] != 1 {
				t.Errorf("rows written by dataset: %v; want %s's (its declared Writes) and one action_runs row", written, act.Writes)
			}
		})
	}
}

// rowProblems says what in row the data service would refuse: a field d
// does not declare, a value not of its field's type, a required field
// missing.
func rowProblems(d datasets.Dataset, row map[string]any) []string {
	var out []string
	for name, v := range row {
		f, ok := d.Field(name)
		if !ok {
			out = append(out, fmt.Sprintf("%s is not a field of %s", name, d.Resource))
			continue
		}
		if v == nil {
			continue
		}
		if !ofType(f.Type, v) {
			out = append(out, fmt.Sprintf("%s is %T %v, not a %s", name, v, v, f.Type))
		}
	}
	for _, f := range d.Fields {
		if f.Required && row[f.Name] == nil {
			out = append(out, fmt.Sprintf("required field %s is missing", f.Name))
		}
	}
	return out
}

// ofType reports whether v, as the row carries it to the data service (a
// JSON value decoded into Go), is of the catalog type typ.
func ofType(typ string, v any) bool {
	s, isString := v.(string)
	n, isNumber := v.(float64)
	switch typ {
	case datasets.TString:
		return isString
	case datasets.TNumber:
		return isNumber && !math.IsNaN(n) && !math.IsInf(n, 0)
	case datasets.TInteger:
		return isNumber && n == math.Trunc(n)
	case datasets.TBoolean:
		_, ok := v.(bool)
		return ok
	case datasets.TDate:
		_, err := time.Parse(time.DateOnly, s)
		return isString && err == nil
	case datasets.TTimestamp:
		_, err := time.Parse(time.RFC3339Nano, s)
		return isString && err == nil
	case datasets.TURL:
		u, err := url.Parse(s)
		return isString && err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
	case datasets.TUUID:
		_, err := uuid.Parse(s)
		return isString && err == nil && len(s) == 36
	case datasets.TJSON:
		_, err := json.Marshal(v)
		return err == nil && !strings.Contains(fmt.Sprint(v), "%!")
	}
	return false
}

func (w *writes) ListRecords(_ context.Context, _, resource string, max int) ([]map[string]any, bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []map[string]any
	for _, wr := range w.writes {
		if wr.Resource == resource {
			out = append(out, wr.Rows...)
		}
	}
	return out[:min(max, len(out))], len(out) > max, nil
}
