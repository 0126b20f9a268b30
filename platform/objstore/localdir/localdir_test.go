package localdir_test

import (
	"testing"

	"github.com/atrium-hq/atrium/platform/objstore"
	"github.com/atrium-hq/atrium/platform/objstore/localdir"
	"github.com/atrium-hq/atrium/platform/objstore/objstoretest"
)

func TestLocalDirContract(t *testing.T) {
	objstoretest.RunAll(t, func(t *testing.T) objstore.Store {
		s, err := localdir.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
