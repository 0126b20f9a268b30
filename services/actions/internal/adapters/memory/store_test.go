package memory_test

import (
	"testing"

	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/actions/internal/app/storetest"
)

func TestMemoryStoreContract(t *testing.T) {
	storetest.RunAll(t, func(*testing.T) storetest.Store { return memory.New(memdb.New(nil)) })
}
