// Package postgres is the webhooks store on PostgreSQL, in the webhooks
// schema, held to the same contract (app/storetest) as the memory store.
package postgres
