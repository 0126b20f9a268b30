package action

import (
	"context"
	"time"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// Client is a client as the CRM describes it to actions.
type Client struct {
	ID, Name, Domain, Status string
	// AutoDeploy publishes generated content without review.
	AutoDeploy bool
}

// Providers are the ports actions do their work through.
type Providers struct {
	Text   provider.TextGenerator
	Pages  provider.PageFetcher
	Mail   provider.Mailer
	Index  provider.Indexer
	Images provider.ImageRenderer
	Blobs  provider.BlobStore
	Search provider.SearchData
	// MediaURL is the public URL a stored blob is served at.
	MediaURL func(name string) string
}

// RecordReader reads rows of the client's datasets, which the data service
// owns.
type RecordReader interface {
	// GetRecord returns one row; an error wrapping store.ErrNotFound
	// (platform/store) if the client's dataset has no row with that id.
	GetRecord(ctx context.Context, clientID, resource, id string) (map[string]any, error)
}

// Exec is what a handler gets for one run.
type Exec struct {
	RunID string
	// AgencyID is the agency the run is for.
	AgencyID string
	Client   Client
	Input    Input
	Now      time.Time
	P        *Providers
	// Records reads rows the action works on (deploy_blog's post).
	Records RecordReader
	// Datasets, Runs and Branding are what a report reads
	// (generate_report).
	Datasets DatasetLister
	Runs     RunLister
	Branding BrandingReader
	// Logos reads the branding's logo; nil: reports are signed with the
	// name only.
	Logos LogoReader
	// Shares makes the share link of a report (generate_report); nil:
	// no link.
	Shares ShareMaker
}

// Result is a handler's successful outcome.
type Result struct {
	// Data is the record the action answers with.
	Data map[string]any
	// Writes are the rows to write, the record's included. Every row has
	// an id, so that writing them again after a crash changes nothing.
	Writes []RecordWrite
	// StatusCode is the provider's success status; 0 means 200.
	StatusCode int
}
