// Package provider declares the ports through which actions do their work
// outside Atrium, one file each: text generation (text.go), web pages
// (pages.go), mail (mail.go), search-engine indexing (index.go), images
// (images.go), generated files (blobs.go) and SEO data (seo.go), with Error,
// the one way a provider says it failed, and the Meter (usage.go) through
// which a paid provider reports what each of a run's calls cost and the
// SEO cache what it answered, so that the run records its provider cost.
//
// Each port has its contract suite in providertest (RunText, RunPages,
// ...), which every adapter under internal/adapters runs in one call: the
// suite states what the handlers and the run engine rely on, so that a new
// adapter (a commercial SEO API, another mailer) is held to it before it is
// wired in.
package provider
