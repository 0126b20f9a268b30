package app_test

import (
	"bytes"
	"testing"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// The actions service reads an agency's logo by its asset id alone: it
// gets the file when one of the agency's sites holds it, and nothing of
// another agency's (whose site is not among the agency's).
func TestAgencyFileReadsOnlyTheAgencysOwnAssets(t *testing.T) {
	w := newWorld(t, app.AssetConfig{MaxBytes: 1 << 20})
	data := pngFile(t, 60, 20)
	a, err := w.assets.Upload(t.Context(), w.site, upload(data, "logo.png", "", true))
	if err != nil {
		t.Fatal(err)
	}
	own := []app.Site{{ID: "00000000-0000-4000-8000-000000000001"}, {ID: w.site}}
	got, asset, err := w.assets.AgencyFile(t.Context(), own, a.ID, 1<<20)
	if err != nil || !bytes.Equal(got, data) || asset.ContentType != "image/png" {
		t.Fatalf("AgencyFile = %d bytes, %q, %v; want the logo's %d bytes", len(got), asset.ContentType, err, len(data))
	}
	other := []app.Site{{ID: "00000000-0000-4000-8000-000000000002"}}
	for name, c := range map[string]struct {
		sites []app.Site
		id    string
		max   int64
		kind  apperr.Kind
	}{
		"another agency's asset": {other, a.ID, 1 << 20, apperr.KindNotFound},
		"an agency with no site": {nil, a.ID, 1 << 20, apperr.KindNotFound},
		"not an id":              {own, "logo.png", 1 << 20, apperr.KindNotFound},
		"larger than asked":      {own, a.ID, int64(len(data)) - 1, apperr.KindPreconditionFailed},
		"max out of range":       {own, a.ID, 0, apperr.KindInvalid},
	} {
		if b, _, err := w.assets.AgencyFile(t.Context(), c.sites, c.id, c.max); apperr.KindOf(err) != c.kind || b != nil {
			t.Errorf("%s: %d bytes, %v; want %v", name, len(b), err, c.kind)
		}
	}
}
