// Package postgres is the audit store on PostgreSQL, in the audit schema,
// held to the same contract (app/storetest) as the memory store.
package postgres
