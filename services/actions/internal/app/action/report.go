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

// BrandingReader reads an agency's branding.
type BrandingReader interface {
	// Branding returns the agency's branding; ok false if it set none.
	Branding(ctx context.Context, agencyID string) (b Branding, ok bool, err error)
}
