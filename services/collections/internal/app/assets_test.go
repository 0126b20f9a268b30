package app_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"image"
	"image/png"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/objstore"
	"github.com/atrium-hq/atrium/platform/objstore/localdir"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/services/collections/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// world is the assets use cases on the memory store and a local directory.
type world struct {
	db      *memdb.DB
	store   app.Store
	dir     string
	objects *localdir.Store
	assets  *app.Assets
	content *app.Content
	site    string
}

func newWorld(t *testing.T, cfg app.AssetConfig) *world {
	t.Helper()
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = app.DefaultMaxAssetBytes
	}
	w := &world{db: memdb.New(nil), dir: t.TempDir()}
	w.store = memory.New(w.db)
	var err error
	if w.objects, err = localdir.New(w.dir); err != nil {
		t.Fatal(err)
	}
	clock := app.Clock(time.Now)
	w.assets = app.NewAssets(app.AssetStoreOf(w.store), w.objects, clock, cfg, slog.New(slog.DiscardHandler))
	w.content = app.NewContent(app.ContentStoreOf(w.store), clock)
	site, err := app.NewSites(app.SiteStoreOf(w.store), nil, clock).Create(t.Context(), app.NewSite{Name: "Bakery"})
	if err != nil {
		t.Fatal(err)
	}
	w.site = site.ID
	return w
}

// files lists the objects in the store's directory.
func (w *world) files(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(w.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !strings.Contains(p, "/.tmp/") {
			out = append(out, strings.TrimPrefix(p, w.dir+"/"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// events are the subjects and payloads the outbox holds.
func (w *world) events(t *testing.T) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	err := w.db.Outbox().Claim(t.Context(), 100, func(_ context.Context, es []outbox.Event) int {
		for _, e := range es {
			var p map[string]any
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				t.Fatal(err)
			}
			out[e.Subject] = p
		}
		return len(es)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func pngFile(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// stream hides every method of r but Read, as an upload's stream does.
type stream struct{ r io.Reader }

func (s stream) Read(p []byte) (int, error) { return s.r.Read(p) }

func upload(data []byte, filename, declared string, known bool) app.NewAsset {
	size := int64(-1)
	if known {
		size = int64(len(data))
	}
	return app.NewAsset{Filename: filename, DeclaredType: declared, Size: size, Body: stream{bytes.NewReader(data)}}
}

func wantKind(t *testing.T, err error, kind apperr.Kind, says string) {
	t.Helper()
	if apperr.KindOf(err) != kind || !strings.Contains(err.Error(), says) {
		t.Fatalf("error %v; want kind %d saying %q", err, kind, says)
	}
}

func TestUploadStoresTheFileAndItsFacts(t *testing.T) {
	w := newWorld(t, app.AssetConfig{})
	data := pngFile(t, 321, 123)
	for _, known := range []bool{true, false} {
		alt := "  A loaf on a board "
		in := upload(data, "Loaf of the day.png", "image/png", known)
		in.Alt = &alt
		a, err := w.assets.Upload(t.Context(), w.site, in)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if a.ContentType != "image/png" || a.Size != int64(len(data)) || a.SHA256 != hex.EncodeToString(sum[:]) ||
			a.Width == nil || *a.Width != 321 || *a.Height != 123 || a.Alt != "A loaf on a board" || a.Filename != "Loaf of the day.png" {
			t.Fatalf("known size %v: %+v", known, a)
		}
		got, err := objstore.ReadAll(t.Context(), w.objects, a.ObjectKey())
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("the stored file: %d bytes, %v; want the upload's %d", len(got), err, len(data))
		}
		if !strings.HasPrefix(a.ObjectKey(), "assets/"+a.Name[:2]+"/") || !strings.HasSuffix(a.Name, ".png") {
			t.Fatalf("object key %s", a.ObjectKey())
		}
		read, err := w.assets.Get(t.Context(), w.site, strings.ToUpper(a.ID))
		if err != nil || read.Name != a.Name {
			t.Fatalf("Get = %+v, %v", read, err)
		}
		ev := w.events(t)["atrium.collections."+w.site+".asset.created"]
		if ev["id"] != a.ID || ev["content_type"] != "image/png" || ev["size"] != float64(len(data)) || ev["sha256"] != a.SHA256 {
			t.Fatalf("asset.created event = %v", ev)
		}
	}
}

func TestUploadRefusalsLeaveNothing(t *testing.T) {
	w := newWorld(t, app.AssetConfig{MaxBytes: 1000})
	small := pngFile(t, 2, 2)
	corrupt := append(append([]byte{}, small[:12]...), []byte("JUNK")...)
	corrupt = append(corrupt, make([]byte, 200)...)
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="4" height="2"><script>alert(1)</script></svg>`)
	for _, tc := range []struct {
		name string
		in   app.NewAsset
		kind apperr.Kind
		says string
	}{
		{"declared JPEG, is PNG", upload(small, "a.jpg", "image/jpeg", true), apperr.KindInvalid, "declared image/jpeg but its content is PNG (image/png)"},
		{"HTML", upload([]byte("<!DOCTYPE html><script>alert(1)</script>"), "a.png", "", false), apperr.KindInvalid, "it looks like text/html"},
		{"declared a type not allowed", upload(small, "a.exe", "application/x-msdownload", true), apperr.KindInvalid, "files of type application/x-msdownload are not allowed; allowed: JPEG (image/jpeg), PNG (image/png), WebP (image/webp), GIF (image/gif), AVIF (image/avif), PDF (application/pdf), MP4 (video/mp4)"},
		{"SVG not allowed", upload(svg, "logo.svg", "", true), apperr.KindInvalid, "--allow-svg-assets"},
		{"SVG declared, not allowed", upload(svg, "logo.svg", "image/svg+xml", true), apperr.KindInvalid, "--allow-svg-assets"},
		{"corrupt header", upload(corrupt, "a.png", "image/png", false), apperr.KindInvalid, "the file is not a valid PNG: its first chunk is not IHDR"},
		{"too large, said up front", upload(make([]byte, 1001), "a.png", "", true), apperr.KindInvalid, "larger than this deployment's limit of 1000 bytes"},
		{"too large, found streaming", upload(append(pngFile(t, 2, 2), make([]byte, 1000)...), "a.png", "", false), apperr.KindInvalid, "larger than this deployment's limit of 1000 bytes"},
		{"empty", upload(nil, "a.png", "", false), apperr.KindInvalid, "the file is empty"},
		{"a path for a name", upload(small, "../a.png", "", true), apperr.KindInvalid, "filename must be a file name"},
		{"a blank name", upload(small, "  ", "", true), apperr.KindInvalid, "filename must be a file name"},
		{"a control character", upload(small, "a\x07.png", "", true), apperr.KindInvalid, "filename must be a file name"},
		{"an unreadable type", upload(small, "a.png", "image/", true), apperr.KindInvalid, "is not a media type"},
		{"shorter than said", app.NewAsset{Filename: "a.png", Size: int64(len(small) + 10), Body: bytes.NewReader(small)}, apperr.KindInvalid, "did not match its declared length"},
	} {
		_, err := w.assets.Upload(t.Context(), w.site, tc.in)
		wantKind(t, err, tc.kind, tc.says)
		if f := w.files(t); len(f) != 0 {
			t.Fatalf("%s: the refused upload left %v", tc.name, f)
		}
		if as, _, _ := w.assets.List(t.Context(), w.site, nil, nil); len(as) != 0 {
			t.Fatalf("%s: the refused upload left an asset", tc.name)
		}
	}
	// The 413 travels as a reason the gateway maps.
	_, err := w.assets.Upload(t.Context(), w.site, upload(make([]byte, 1001), "a.png", "", true))
	if apperr.ReasonOf(apperr.ToStatus(err)) != apperr.ReasonTooLarge {
		t.Fatalf("too large: %v; want reason %s (HTTP 413)", err, apperr.ReasonTooLarge)
	}
}

// neverRead fails the test when read: an upload refused on its header
// must not consume its file.
type neverRead struct{ t *testing.T }

func (n neverRead) Read([]byte) (int, error) {
	n.t.Error("the body was read after a refusal that needed none of it")
	return 0, io.EOF
}

func TestRefusalsOnTheHeaderReadNoFile(t *testing.T) {
	w := newWorld(t, app.AssetConfig{MaxBytes: 1000})
	for _, in := range []app.NewAsset{
		{Filename: "a.png", Size: 5000, Body: neverRead{t}},
		{Filename: "a.html", DeclaredType: "text/html", Size: -1, Body: neverRead{t}},
		{Filename: "", DeclaredType: "image/png", Size: -1, Body: neverRead{t}},
	} {
		if _, err := w.assets.Upload(t.Context(), w.site, in); err == nil {
			t.Fatalf("%+v accepted", in)
		}
	}
}

func TestSVGWhenAllowed(t *testing.T) {
	w := newWorld(t, app.AssetConfig{AllowSVG: true})
	a, err := w.assets.Upload(t.Context(), w.site, upload([]byte(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 300 150"/>`), "logo.svg", "image/svg+xml", false))
	if err != nil || a.ContentType != "image/svg+xml" || *a.Width != 300 || *a.Height != 150 || !strings.HasSuffix(a.Name, ".svg") {
		t.Fatalf("%+v, %v", a, err)
	}
	a, err = w.assets.Upload(t.Context(), w.site, upload([]byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), "icon.svg", "", false))
	if err != nil || a.Width != nil || a.Height != nil {
		t.Fatalf("an SVG without a size: %+v, %v; want it stored with null width and height", a, err)
	}
}

func TestAltAfterTheFile(t *testing.T) {
	w := newWorld(t, app.AssetConfig{})
	late := "Given after the file"
	in := upload([]byte("%PDF-1.7\n..."), "menu.pdf", "application/pdf", false)
	in.Trailer = func() *string { return &late }
	a, err := w.assets.Upload(t.Context(), w.site, in)
	if err != nil || a.Alt != late || a.Width != nil {
		t.Fatalf("%+v, %v", a, err)
	}
	early := "before"
	in = upload([]byte("%PDF-1.7\n..."), "menu.pdf", "", false)
	in.Alt, in.Trailer = &early, func() *string { return &late }
	_, err = w.assets.Upload(t.Context(), w.site, in)
	wantKind(t, err, apperr.KindInvalid, "alt was given twice")
	if f := w.files(t); len(f) != 1 {
		t.Fatalf("files %v; want only the first upload's", f)
	}
}

// failingStore fails every transaction, as a database that went away.
type failingStore struct{ app.Store }

var errDatabase = errors.New("database unreachable")

func (failingStore) InTx(context.Context, func(app.Tx) error) error { return errDatabase }

func TestAFailedWriteRemovesTheFile(t *testing.T) {
	w := newWorld(t, app.AssetConfig{})
	u := app.NewAssets(app.AssetStoreOf(failingStore{w.store}), w.objects, app.Clock(time.Now), app.AssetConfig{MaxBytes: 1 << 20}, slog.New(slog.DiscardHandler))
	if _, err := u.Upload(t.Context(), w.site, upload(pngFile(t, 4, 4), "a.png", "", true)); !errors.Is(err, errDatabase) {
		t.Fatalf("%v; want the store's error", err)
	}
	if f := w.files(t); len(f) != 0 {
		t.Fatalf("the file of an asset never written is still stored: %v", f)
	}
}

func TestAssetsAreTheSites(t *testing.T) {
	w := newWorld(t, app.AssetConfig{})
	other, err := app.NewSites(app.SiteStoreOf(w.store), nil, app.Clock(time.Now)).Create(t.Context(), app.NewSite{Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := w.assets.Upload(t.Context(), w.site, upload(pngFile(t, 4, 4), "a.png", "", true))
	if err != nil {
		t.Fatal(err)
	}
	alt := "x"
	for name, err := range map[string]error{
		"get": func() error { _, err := w.assets.Get(t.Context(), other.ID, a.ID); return err }(),
		"update": func() error {
			_, err := w.assets.Update(t.Context(), other.ID, a.ID, app.AssetChange{Alt: &alt})
			return err
		}(),
		"delete": w.assets.Delete(t.Context(), other.ID, a.ID),
		"no id":  func() error { _, err := w.assets.Get(t.Context(), w.site, "nope"); return err }(),
	} {
		t.Run(name, func(t *testing.T) { wantKind(t, err, apperr.KindNotFound, "not found") })
	}
	if as, _, _ := w.assets.List(t.Context(), other.ID, nil, nil); len(as) != 0 {
		t.Fatal("another site lists the asset")
	}
	if _, err := objstore.ReadAll(t.Context(), w.objects, a.ObjectKey()); err != nil {
		t.Fatalf("another site's delete removed the file: %v", err)
	}
}

func TestUpdateAndDelete(t *testing.T) {
	w := newWorld(t, app.AssetConfig{})
	a, err := w.assets.Upload(t.Context(), w.site, upload(pngFile(t, 4, 4), "a.png", "", true))
	if err != nil {
		t.Fatal(err)
	}
	w.events(t)
	_, err = w.assets.Update(t.Context(), w.site, a.ID, app.AssetChange{})
	wantKind(t, err, apperr.KindInvalid, "nothing to change: give alt, filename or both")
	bad := "a/b.png"
	_, err = w.assets.Update(t.Context(), w.site, a.ID, app.AssetChange{Filename: &bad})
	wantKind(t, err, apperr.KindInvalid, "filename must be a file name")
	long := strings.Repeat("x", app.MaxAlt+1)
	_, err = w.assets.Update(t.Context(), w.site, a.ID, app.AssetChange{Alt: &long})
	wantKind(t, err, apperr.KindInvalid, "alt must be text of at most 1000 characters")
	name, alt := "loaf.png", "A loaf"
	got, err := w.assets.Update(t.Context(), w.site, a.ID, app.AssetChange{Filename: &name, Alt: &alt})
	if err != nil || got.Filename != name || got.Alt != alt || got.Name != a.Name || got.SHA256 != a.SHA256 || !got.UpdatedAt.After(a.CreatedAt) && !got.UpdatedAt.Equal(a.CreatedAt) {
		t.Fatalf("update = %+v, %v", got, err)
	}
	if ev := w.events(t)["atrium.collections."+w.site+".asset.updated"]; ev["filename"] != name {
		t.Fatalf("asset.updated event = %v", ev)
	}
	if err := w.assets.Delete(t.Context(), w.site, a.ID); err != nil {
		t.Fatal(err)
	}
	if ev := w.events(t)["atrium.collections."+w.site+".asset.deleted"]; ev["id"] != a.ID {
		t.Fatalf("asset.deleted event = %v", ev)
	}
	if _, err := w.objects.Open(t.Context(), a.ObjectKey()); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("the deleted asset's file: %v; want it removed", err)
	}
	wantKind(t, w.assets.Delete(t.Context(), w.site, a.ID), apperr.KindNotFound, "not found")
}

func TestAssetFields(t *testing.T) {
	w := newWorld(t, app.AssetConfig{})
	other, err := app.NewSites(app.SiteStoreOf(w.store), nil, app.Clock(time.Now)).Create(t.Context(), app.NewSite{Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	for _, site := range []string{w.site, other.ID} {
		if _, err := w.content.CreateCollection(t.Context(), site, app.NewCollection{Name: "Posts", Slug: "posts",
			Fields: []app.Field{{Key: "title", Type: app.TypeText}, {Key: "cover", Type: app.TypeAsset}}}); err != nil {
			t.Fatal(err)
		}
	}
	mine, err := w.assets.Upload(t.Context(), w.site, upload(pngFile(t, 4, 4), "a.png", "", true))
	if err != nil {
		t.Fatal(err)
	}
	_, it, err := w.content.CreateItem(t.Context(), w.site, "posts", app.NewItem{Data: map[string]any{"cover": strings.ToUpper(mine.ID)}})
	if err != nil || string(it.Values["cover"]) != `"`+mine.ID+`"` {
		t.Fatalf("an item with the site's asset: %+v, %v; want the id stored in lower case", it.Values, err)
	}
	_, _, err = w.content.CreateItem(t.Context(), other.ID, "posts", app.NewItem{Data: map[string]any{"cover": mine.ID}})
	wantKind(t, err, apperr.KindInvalid, "data.cover must be the id of an asset of this site; there is no asset")
	_, _, err = w.content.UpdateItem(t.Context(), w.site, "posts", it.ID, app.ItemUpdate{Data: map[string]any{"cover": "0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b"}})
	wantKind(t, err, apperr.KindInvalid, "there is no asset")
	_, _, err = w.content.CreateItem(t.Context(), w.site, "posts", app.NewItem{Data: map[string]any{"cover": "hero.png"}})
	wantKind(t, err, apperr.KindInvalid, "data.cover must be the id (a UUID) of an asset of this site")
	_, _, _, err = w.content.Items(t.Context(), w.site, "posts", app.ListParams{FilterField: "cover", FilterValue: mine.ID})
	if err != nil {
		t.Fatalf("filtering by an asset field: %v", err)
	}
	// Deleting the asset leaves the item's value, as references are left.
	if err := w.assets.Delete(t.Context(), w.site, mine.ID); err != nil {
		t.Fatal(err)
	}
	if _, got, err := w.content.Item(t.Context(), w.site, "posts", it.ID); err != nil || string(got.Values["cover"]) != `"`+mine.ID+`"` {
		t.Fatalf("the item after its asset's deletion: %+v, %v", got.Values, err)
	}
}

func TestAssetConfig(t *testing.T) {
	for _, n := range []int64{0, -1, app.LimitMaxAssetBytes + 1} {
		if err := (app.AssetConfig{MaxBytes: n}).Validate(); err == nil {
			t.Errorf("--max-asset-bytes %d accepted", n)
		}
	}
	if err := (app.AssetConfig{MaxBytes: app.LimitMaxAssetBytes}).Validate(); err != nil {
		t.Error(err)
	}
}
