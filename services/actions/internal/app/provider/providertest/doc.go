// Package providertest is the contract of each provider port, one exported
// suite per port: RunText, RunPages, RunMailer, RunIndexer, RunImages,
// RunBlobs and RunSEO. Every adapter's test runs its port's suite in one
// call (the built-in text generator and the OpenAI-compatible one share
// RunText), so that what the handlers and the run engine rely on is stated
// once and an adapter that breaks it fails here, not in a run.
//
// A suite asserts the contract only: the shape of the answer the handlers
// read, that a failure of the outside world is a *provider.Error whose
// status the run reports, and that a canceled or expired context ends a
// call with that context's error (the engine answers 504 for an expired
// one). What an adapter does beyond it (the prose of the built-in articles,
// the SMTP conversation, the IndexNow protocol) is tested beside the
// adapter. Where a port talks to a server, the suite runs one of its own
// on the loopback interface and passes its address to the adapter's
// constructor.
package providertest
