package provider_test

import (
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// The media route serves a file by the name in its URL, without a key: a
// name is generated unguessable, and nothing else is taken for one.
func TestGeneratedNames(t *testing.T) {
	a, errA := provider.NewPNGName()
	b, errB := provider.NewPNGName()
	if errA != nil || errB != nil || a == b || !provider.IsGeneratedName(a) || !provider.IsGeneratedName(b) {
		t.Fatalf("NewPNGName gave %q (%v) and %q (%v); want two different generated names", a, errA, b, errB)
	}
	hex := strings.Repeat("0123456789abcdef", 2)
	for _, name := range []string{"", "x.png", hex, hex + ".jpg", strings.ToUpper(hex) + ".png", hex + ".png/", "../" + hex + ".png", hex[1:] + ".png", hex + "0.png"} {
		if provider.IsGeneratedName(name) {
			t.Errorf("%q is taken for a generated name", name)
		}
	}
}
