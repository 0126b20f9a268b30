package web_test

import (
	"testing"

	"github.com/atrium-hq/atrium/services/actions/internal/adapters/web"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider/providertest"
)

// The suite serves its pages on the loopback interface, which only a
// fetcher that allows private addresses reaches.
func TestPagesContract(t *testing.T) {
	providertest.RunPages(t, func(t *testing.T) provider.PageFetcher { return newFetcher(t, web.Config{AllowPrivate: true}) })
}
