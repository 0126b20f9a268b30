package syntheticseo_test

import (
	"testing"

	"github.com/atrium-hq/atrium/services/actions/internal/adapters/syntheticseo"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider/providertest"
)

func TestSEOContract(t *testing.T) {
	providertest.RunSEO(t, func(t *testing.T) provider.SearchData {
		p, err := syntheticseo.New(syntheticseo.Config{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	})
}
