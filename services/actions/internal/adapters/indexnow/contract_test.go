package indexnow_test

import (
	"testing"

	"github.com/atrium-hq/atrium/services/actions/internal/adapters/indexnow"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider/providertest"
)

func TestIndexerContract(t *testing.T) {
	providertest.RunIndexer(t, func(t *testing.T, endpoint string) provider.Indexer {
		ix, err := indexnow.New(indexnow.Config{Endpoint: endpoint, Key: "73134416ae45434d98edc086e0bf6740"})
		if err != nil {
			t.Fatal(err)
		}
		return ix
	})
}
