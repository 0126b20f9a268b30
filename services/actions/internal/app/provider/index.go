package provider

import "context"

// Indexer submits URLs to search engines for indexing.
type Indexer interface {
	Submit(ctx context.Context, urls []string) (Submission, error)
}

// Submission is an accepted submission.
type Submission struct {
	Endpoint   string
	StatusCode int // 200 or 202
}
