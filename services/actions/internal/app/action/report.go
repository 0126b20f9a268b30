package action

import (
	"context"
	"time"
)

// What generate_report reads besides the run's input: the client's rows,
// the client's runs and the agency's branding, each through a port the
// run engine provides.

// DatasetLister lists a client's rows of a dataset, which the data service
// owns.
type DatasetLister interface {
	// ListRecords returns up to max of the client's rows of resource,
	// oldest first, and whether there were more.
	ListRecords(ctx context.Context, clientID, resource string, max int) (rows []map[string]any, more bool, err error)
}

// RunSummary is one run as a report counts it.
type RunSummary struct {
	Action, Status string
	AI, Data       int64
	At             time.Time
}

// RunLister lists the client's runs.
type RunLister interface {
	// ClientRuns returns up to max of the agency's runs for the client
	// created since since, newest first.
	ClientRuns(ctx context.Context, agencyID, clientID string, since time.Time, max int) ([]RunSummary, error)
}

// Branding is how an agency's reports look.
type Branding struct {
	Name, LogoAssetID string
	Primary, Accent   string
}

// MaxLogoBytes bounds the logo a report draws: a logo is a small image,
// and a report is made in memory.
const MaxLogoBytes = 1 << 20

// LogoReader reads the file of an agency's logo, an asset of one of its
// sites, which the collections service keeps.
type LogoReader interface {
	// AgencyAssetFile returns the bytes and type of the agency's asset,
	// an error when it has no such asset or it is over max bytes.
	AgencyAssetFile(ctx context.Context, agencyID, assetID string, max int64) (content []byte, contentType string, err error)
}

// BrandingReader reads an agency's branding.
type BrandingReader interface {
	// Branding returns the agency's branding; ok false if it set none.
	Branding(ctx context.Context, agencyID string) (b Branding, ok bool, err error)
}
