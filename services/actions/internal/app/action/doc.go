// Package action is what an action is, for the catalog that declares the
// actions, the handlers that do their work and the run engine (package app)
// that runs them: an Action with its Fields and Cost (action.go), what its
// Handler gets for one run, Exec, and gives back, Result (exec.go), its
// validated Input (input.go) and the rows it writes to the data service,
// RecordWrite (records.go).
//
// It holds types and no behaviour of its own, so that catalog, handlers and
// app can all import it without importing each other.
package action
