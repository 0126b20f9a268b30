package mediastore_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/objstore"
	"github.com/atrium-hq/atrium/platform/objstore/localdir"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/mediastore"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider/providertest"
)

func newObjects(t *testing.T) *localdir.Store {
	t.Helper()
	o, err := localdir.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestBlobsContract(t *testing.T) {
	providertest.RunBlobs(t, func(t *testing.T) provider.BlobStore { return mediastore.New(newObjects(t)) })
}

func TestOnlyGeneratedNamesAndTheirTypes(t *testing.T) {
	s := mediastore.New(newObjects(t))
	name, _ := provider.NewPNGName()
	for _, tc := range []struct{ name, ct string }{{"../etc/passwd", "image/png"}, {"x.png", "image/png"}, {name, "image/jpeg"}} {
		if err := s.Put(t.Context(), tc.name, tc.ct, []byte("x")); apperr.KindOf(err) != apperr.KindInvalid {
			t.Errorf("Put(%q, %q) = %v; want a refusal", tc.name, tc.ct, err)
		}
	}
	if _, err := s.Get(t.Context(), "../x"); apperr.KindOf(err) != apperr.KindInvalid {
		t.Errorf("Get of a non-name: %v", err)
	}
}

// TestMigrateBlobDir: the images of the old directory format move into
// the store, keep their bytes and are served under the same names; other
// files stay; a second run moves nothing.
func TestMigrateBlobDir(t *testing.T) {
	dir := t.TempDir()
	a, _ := provider.NewPNGName()
	b, _ := provider.NewPNGName()
	pngA, pngB := []byte("\x89PNG\r\n\x1a\nA\nwith newline"), []byte("\x89PNG\r\n\x1a\nB")
	files := map[string][]byte{
		a:              append([]byte("atrium-blob/1 image/png\n"), pngA...),
		b:              append([]byte("atrium-blob/1 image/png\n"), pngB...),
		"notes.txt":    []byte("keep me"),
		"ffff" + a[4:]: []byte("\x89PNG raw, not the old format"),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	objects := newObjects(t)
	s := mediastore.New(objects)
	n, err := mediastore.MigrateBlobDir(t.Context(), dir, s)
	if err != nil || n != 2 {
		t.Fatalf("moved %d, %v; want the 2 images", n, err)
	}
	for name, want := range map[string][]byte{a: pngA, b: pngB} {
		got, err := s.Get(t.Context(), name)
		if err != nil || !bytes.Equal(got.Data, want) || got.ContentType != "image/png" {
			t.Errorf("%s after the move: %q %q, %v", name, got.ContentType, got.Data, err)
		}
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s is still in the old directory", name)
		}
		if data, err := objstore.ReadAll(t.Context(), objects, "media/"+name); err != nil || !bytes.Equal(data, want) {
			t.Errorf("media/%s on the object store: %q, %v", name, data, err)
		}
	}
	left, _ := os.ReadDir(dir)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	if len(names) != 2 || !strings.Contains(strings.Join(names, " "), "notes.txt") {
		t.Errorf("left in the directory: %v; want the two files that are not old images", names)
	}
	if n, err := mediastore.MigrateBlobDir(t.Context(), dir, s); err != nil || n != 0 {
		t.Errorf("second run moved %d, %v", n, err)
	}
	if n, err := mediastore.MigrateBlobDir(t.Context(), filepath.Join(dir, "missing"), s); err != nil || n != 0 {
		t.Errorf("a directory that does not exist: %d, %v", n, err)
	}
}
