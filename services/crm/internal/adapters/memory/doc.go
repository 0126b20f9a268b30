// Package memory is the CRM store kept in process memory: the embedded
// default of `atrium serve`, held to the same contract suite as the
// PostgreSQL store. Nothing survives a restart.
//
// One mutex guards the state. A transaction holds it for writing from start
// to end and records an undo step for every change, so a failed transaction
// leaves no trace; its events reach the outbox only on commit.
package memory
