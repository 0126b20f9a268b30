// Package memory is the audit store in memory (atrium serve without a
// database), held to the same contract (app/storetest) as PostgreSQL.
package memory
