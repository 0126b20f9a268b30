package builtintext_test

import (
	"testing"

	"github.com/atrium-hq/atrium/services/actions/internal/adapters/builtintext"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider/providertest"
)

func TestTextContract(t *testing.T) {
	providertest.RunText(t, func(*testing.T) provider.TextGenerator { return builtintext.New() })
}
