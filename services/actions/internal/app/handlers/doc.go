// Package handlers does the work of each action of the catalog, one file
// per family: content.go (articles, press releases, business-profile posts,
// topical maps), images.go (featured images), seo.go (audits,
// optimisations, keyword ideas, indexing), backlinks.go (the backlink
// profile and outreach email), local.go (grid ranks), answers.go
// (answer-engine visibility), calls.go (call scoring) and platform.go (the
// blog widget). records.go and text.go hold what they share: record ids and
// rows, and what they ask of the text generator and clean up after it.
//
// A handler is an action.Handler: it reads its validated input and the
// client from the action.Exec, calls providers through it, and returns the
// record to answer with and the rows to write, each row with an id fixed by
// the run or by what it describes, so that writing them twice changes
// nothing. It never touches the store or the credits: the run engine (package
// app) does.
package handlers
