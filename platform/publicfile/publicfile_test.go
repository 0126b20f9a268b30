package publicfile

import (
	"slices"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/platform/objstore"
)

func TestNamesAreCapabilitiesWithTheirKind(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		n := NewName("png")
		if seen[n] {
			t.Fatalf("NewName repeated %s", n)
		}
		seen[n] = true
		if ct, ok := ContentType(n); !ok || ct != "image/png" {
			t.Fatalf("ContentType(%s) = %q, %v", n, ct, ok)
		}
		key, ok := AssetKey(n)
		if !ok || key != "assets/"+n[:2]+"/"+n || objstore.CheckKey(key) != nil {
			t.Fatalf("AssetKey(%s) = %q, %v", n, key, ok)
		}
		if key, ok := MediaKey(n); !ok || key != "media/"+n || objstore.CheckKey(key) != nil {
			t.Fatalf("MediaKey(%s) = %q, %v", n, key, ok)
		}
	}
	for _, bad := range []string{"", "x.png", strings.Repeat("a", 32), strings.Repeat("a", 32) + ".exe", strings.Repeat("A", 32) + ".png",
		strings.Repeat("a", 31) + ".png", "../" + strings.Repeat("a", 29) + ".png", strings.Repeat("g", 32) + ".png", strings.Repeat("a", 32) + ".png.png"} {
		if _, ok := ContentType(bad); ok {
			t.Errorf("ContentType accepted %q", bad)
		}
		if _, ok := AssetKey(bad); ok {
			t.Errorf("AssetKey accepted %q", bad)
		}
	}
	if p := AssetURLPath("ab.jpg", "Été 2026 #1.jpg"); p != "/files/ab.jpg/%C3%89t%C3%A9%202026%20%231.jpg" {
		t.Errorf("AssetURLPath = %s", p)
	}
	if !Scriptable("image/svg+xml") || Scriptable("image/png") {
		t.Error("only SVG is scriptable")
	}
}

func TestReportPagesAreMediaOnly(t *testing.T) {
	name := NewName("html")
	if _, ok := MediaKey(name); !ok {
		t.Errorf("MediaKey(%q) refused a report page", name)
	}
	if _, ok := AssetKey(name); ok {
		t.Errorf("AssetKey(%q) took a report page as an asset", name)
	}
	if slices.Contains(Types(), HTMLType) {
		t.Errorf("Types() lists %s: no upload may be an HTML page", HTMLType)
	}
	if ct, _ := ContentType(name); !Scriptable(ct) || !NoIndex(ct) {
		t.Errorf("a report page (%s) must be served without script and not indexed", ct)
	}
}
