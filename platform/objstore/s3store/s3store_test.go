package s3store_test

import (
	"testing"

	"github.com/atrium-hq/atrium/platform/objstore"
	"github.com/atrium-hq/atrium/platform/objstore/objstoretest"
	"github.com/atrium-hq/atrium/platform/objstore/s3store"
)

// TestS3Contract runs the contract against a real S3-compatible server
// (versitygw, started by make services-up), a bucket per test.
func TestS3Contract(t *testing.T) {
	objstoretest.RunAll(t, func(t *testing.T) objstore.Store {
		s, err := s3store.New(t.Context(), objstoretest.S3(t).Config())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
