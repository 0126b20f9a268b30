package memory_test

import (
	"testing"

	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/services/audit/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/audit/internal/app"
	"github.com/atrium-hq/atrium/services/audit/internal/app/storetest"
)

func TestMemoryStoreContract(t *testing.T) {
	storetest.RunAll(t, func(*testing.T) app.Store { return memory.New(memdb.New(nil)) })
}
