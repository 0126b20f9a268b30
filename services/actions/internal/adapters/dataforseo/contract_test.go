package dataforseo_test

import (
	"net/http/httptest"
	"testing"

	"github.com/atrium-hq/atrium/services/actions/dataforseotest"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/dataforseo"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider/providertest"
)

// TestSEOContract runs the SEO data contract against the adapter talking
// to a local stand-in for DataForSEO that answers in its documented shapes,
// with the client's bakery in the middle of a neighbourhood of others.
func TestSEOContract(t *testing.T) {
	fake := dataforseotest.New(dataforseotest.Config{Login: login, Password: password,
		Businesses: append(dataforseotest.Neighbourhood("bakery", 53.8, -1.55, 40), dataforseotest.Business{Title: "Rye & Co", Domain: "rye.example", Lat: 53.8, Lng: -1.55})})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	providertest.RunSEO(t, func(t *testing.T) provider.SearchData {
		return newProvider(t, dataforseo.Config{BaseURL: srv.URL})
	})
}
