// Package memory is the CRM store kept in process memory: the embedded
// default of `atrium serve`, held to the same contract suite as the
// PostgreSQL store. Nothing survives a restart.
//
// The lock, the undo log and the outbox are platform/memdb's; this package
// holds the CRM's maps and per-agency list indexes, and records how to undo
// each change it makes.
package memory
