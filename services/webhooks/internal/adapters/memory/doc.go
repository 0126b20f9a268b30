// Package memory is the webhooks store of the embedded default: the
// endpoints in maps, on platform/memdb's lock and undo log, held to the
// same contract (app/storetest) as the PostgreSQL store.
package memory
