package blobdir_test

import (
	"testing"

	"github.com/atrium-hq/atrium/services/actions/internal/adapters/blobdir"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider/providertest"
)

func TestBlobsContract(t *testing.T) {
	providertest.RunBlobs(t, func(t *testing.T) provider.BlobStore {
		s, err := blobdir.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
