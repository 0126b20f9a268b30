// Package pgdb is the PostgreSQL core every service's postgres adapter
// builds on: a pool pinned to the service's own schema, versioned migrations
// (the platform's shared tables, such as the outbox, plus the service's
// own), transactions as closures that retry serialization failures and
// deadlocks and wake the outbox relay after commit, and the translation of
// driver errors into the store port's errors.
//
// A service's adapter then holds only its domain SQL.
//
// Each service owns one schema (crm, collections, data, actions) in a shared
// or separate database; no service reads another's schema.
package pgdb
