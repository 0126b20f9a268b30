package app_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

// brandingOf is one agency's branding.
type brandingOf struct {
	agency string
	b      action.Branding
}

func (f brandingOf) Branding(_ context.Context, agency string) (action.Branding, bool, error) {
	return f.b, agency == f.agency, nil
}

// logoFiles holds one agency's assets, as the collections service would
// find them among its sites; any other is not found.
type logoFiles struct {
	agency string
	files  map[string][]byte
	asked  []string
}

func (l *logoFiles) AgencyAssetFile(_ context.Context, agency, asset string, max int64) ([]byte, string, error) {
	l.asked = append(l.asked, agency+"/"+asset)
	b, ok := l.files[asset]
	if !ok || agency != l.agency {
		return nil, "", apperr.NotFound("asset %s", asset)
	}
	if int64(len(b)) > max {
		return nil, "", apperr.PreconditionFailed("too large")
	}
	return b, "image/png", nil
}

// The report draws the agency's logo when the collections service gives
// it, and is made all the same, with the name only, when it does not.
func TestGenerateReportDrawsTheLogoOrTheNameOnly(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 40, 20))
	for i := range img.Pix {
		img.Pix[i] = 0xc0
	}
	img.Set(0, 0, color.Black)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	const logoID, goneID = "5b0c3f4e-7a51-4c1e-9a57-1c2d3e4f5a6b", "0e8b8a52-9d7f-4a43-8a2e-3f0c1b2d4e5f"
	for _, c := range []struct {
		name  string
		asset string
		want  bool
	}{{"readable", logoID, true}, {"gone", goneID, false}} {
		t.Run(c.name, func(t *testing.T) {
			e, blobs := reportEnv(t)
			e.grant(t, 5, 5)
			logos := &logoFiles{agency: e.agency, files: map[string][]byte{logoID: buf.Bytes()}}
			e.actions.SetBranding(brandingOf{e.agency, action.Branding{Name: "Northwind SEO", LogoAssetID: c.asset, Primary: "#1f3a5f", Accent: "#e07a2e"}})
			e.actions.SetLogos(logos)
			out, err := e.actions.Run(t.Context(), e.agency, map[string]any{"action": "generate_report", "client_id": e.client.ID, "period": "last_month"}, "")
			if err != nil || out.Run.Status != app.StatusSuccess {
				t.Fatalf("run: %+v, %v; a logo must never fail a report", out.Run, err)
			}
			page := string(file(t, blobs, out.Run.Data["html_url"].(string)))
			if got := strings.Contains(page, `<img class="logo" src="data:image/png;base64,`); got != c.want {
				t.Errorf("the HTML shows a logo: %v; want %v", got, c.want)
			}
			if !strings.Contains(page, "Northwind SEO") {
				t.Error("the report lost the agency's name")
			}
			if len(logos.asked) != 1 || logos.asked[0] != e.agency+"/"+c.asset {
				t.Errorf("asked for %v; want the run's agency's logo once", logos.asked)
			}
		})
	}
}
