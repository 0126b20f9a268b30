// Package app is the actions service's use cases: Actions, a plain struct
// that runs the actions of the action interface (POST /api/v1/data) and
// keeps the agencies' credits. Its files follow a run from request to
// records:
//
//	actions.go    Actions, its Config and what a run answers (Outcome)
//	run.go        Run: admit the request, then execute the handler
//	reserve.go    the run recorded as pending and its cost taken; idempotent replays
//	outcome.go    the outcome, the refund and the completion event, in one transaction
//	records.go    the records written to the data service, in batches
//	recovery.go   what a stopped process left: abandoned runs, unwritten records
//	background.go the loops beside the requests: batch writers, marks, recovery
//	events.go     the events the service publishes through the outbox
//	clients.go    the CRM's answer on which clients an agency reaches
//	credits.go    an administrator's credits, and an agency's balance
//	media.go      generated files served back by name
//	metrics.go    the runs and credits counters
//	store.go      the store port (Store, Tx) and the Run it keeps
//
// What the engine runs lives in sub-packages that import nothing of it:
// action (what an action is, gets and gives), catalog (the actions
// declared once, with request validation and discovery), handlers (the
// work of each action, one file per family), provider (the ports to the
// outside: text, pages, mail, indexing, images, blobs, SEO data, with one
// contract suite per port in provider/providertest), onpage
// (the on-page SEO audit) and datasets (the data service's dataset and
// field names, generated from its catalog). storetest is the store port's
// contract suite.
package app
