// Package pgdb holds the PostgreSQL plumbing every service's postgres adapter
// needs: opening a pool pinned to the service's own schema, applying the
// service's embedded migrations, running closures in transactions and
// recognising constraint violations.
//
// Each service owns one schema (crm, collections, data, actions) in a shared
// or separate database; no service reads another's schema.
package pgdb
