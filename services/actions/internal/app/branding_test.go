package app_test

import (
	"html"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

// The agency's branding: the defaults until it puts its own; a bad value
// is a 400 naming the field and changes nothing; another agency keeps its
// own; a report is drawn with the agency's.

func TestBrandingIsCheckedAndKeptPerAgency(t *testing.T) {
	r := app.NewReports(memory.New(memdb.New(nil)))
	ctx := t.Context()
	agency, other := uuid.NewString(), uuid.NewString()
	if b, err := r.GetBranding(ctx, agency); err != nil || b != app.DefaultBranding() {
		t.Fatalf("a new agency's branding = %+v, %v; want the defaults", b, err)
	}
	good := action.Branding{Name: "  Northwind SEO ", Primary: "#1F3A5F", Accent: "#e07a2e"}
	b, err := r.PutBranding(ctx, agency, good)
	if err != nil || b.Name != "Northwind SEO" || b.Primary != "#1f3a5f" {
		t.Fatalf("PutBranding = %+v, %v; want the name trimmed and the colour in lower case", b, err)
	}
	for _, c := range []struct {
		b     action.Branding
		words []string
	}{
		{action.Branding{Name: ""}, []string{"name is required"}},
		{action.Branding{Name: strings.Repeat("n", 101)}, []string{"at most 100"}},
		{action.Branding{Name: "a\nb"}, []string{"one line"}},
		{action.Branding{Name: "X", Primary: "red"}, []string{"colors.primary", "#rrggbb", `"red"`}},
		{action.Branding{Name: "X", Accent: "#12345"}, []string{"colors.accent"}},
		{action.Branding{Name: "X", LogoAssetID: "logo.png"}, []string{"logo_asset_id"}},
	} {
		_, err := r.PutBranding(ctx, agency, c.b)
		wantKind(t, err, apperr.KindInvalid, c.words...)
	}
	if b, _ := r.GetBranding(ctx, agency); b.Name != "Northwind SEO" {
		t.Errorf("after refused puts the branding is %+v; want it unchanged", b)
	}
	if b, _ := r.GetBranding(ctx, other); b != app.DefaultBranding() {
		t.Errorf("another agency sees %+v; want its own defaults", b)
	}
}

func TestReportIsDrawnWithTheAgencysBranding(t *testing.T) {
	e, blobs := reportEnv(t)
	st := memory.New(memdb.New(nil))
	r := app.NewReports(st)
	e.actions.SetBranding(r)
	if _, err := r.PutBranding(t.Context(), e.agency, action.Branding{Name: "Northwind & Co", Primary: "#102030", Accent: "#405060"}); err != nil {
		t.Fatal(err)
	}
	e.grant(t, 5, 5)
	out, err := e.actions.Run(t.Context(), e.agency, map[string]any{"action": "generate_report", "client_id": e.client.ID, "period": "last_month", "sections": []any{"audit"}}, "")
	if err != nil || out.Run.Status != app.StatusSuccess {
		t.Fatalf("run: %+v, %v", out.Run, err)
	}
	page := html.UnescapeString(string(file(t, blobs, out.Run.Data["html_url"].(string))))
	for _, want := range []string{"Northwind & Co", "#102030", "#405060", "76.5"} {
		if !strings.Contains(page, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(page, "Rankings") || strings.Contains(page, "Work done") {
		t.Errorf("only the audit was asked for")
	}
	if text := pdfText(t, file(t, blobs, out.Run.Data["pdf_url"].(string))); !strings.Contains(text, "Northwind & Co") {
		t.Errorf("the PDF is not signed by the agency:\n%s", text)
	}
}
