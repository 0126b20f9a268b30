package app

import (
	"context"

	"github.com/atrium-hq/atrium/platform/store"
)

// Store errors (platform/store's). Adapters return them, possibly wrapped, so
// that use cases can turn them into messages for the caller.
var (
	// ErrNotFound: no row matches.
	ErrNotFound = store.ErrNotFound
	// ErrDuplicate: a unique rule (member email within an agency, link of a
	// client to an agency, key digest) already holds for another row.
	ErrDuplicate = store.ErrDuplicate
)

// Store is what a CRM store adapter implements: the reads of every use case
// and transactions that can do the writes of every use case. The memory and
// postgres adapters both satisfy it and are held to the same contract suite
// (storetest.RunAll). The use cases never see it whole: each holds its own
// port (DirectoryStore, KeyStore, PipelineStore, PeopleStore), a view of it.
type Store interface {
	DirectoryReader
	KeyReader
	PipelineReader
	PeopleReader
	// InTx runs fn in a transaction: either all of its writes (including the
	// events it enqueues) happen, or none do.
	InTx(ctx context.Context, fn func(Tx) error) error
}

// Tx is an adapter's transaction: every use case's transaction port at once.
// Its getters see the transaction's own writes and, in PostgreSQL, lock the
// row they return until the transaction ends, so that read-modify-write use
// cases do not lose updates.
type Tx interface {
	DirectoryTx
	KeyTx
	PipelineTx
	PeopleTx
}

// DirectoryStoreOf presents an adapter's Store as the Directory use cases'
// port.
func DirectoryStoreOf(s Store) DirectoryStore {
	return view[DirectoryTx]{s, func(tx Tx) DirectoryTx { return tx }}
}

// KeyStoreOf presents an adapter's Store as the Keys use cases' port.
func KeyStoreOf(s Store) KeyStore {
	return view[KeyTx]{s, func(tx Tx) KeyTx { return tx }}
}

// PipelineStoreOf presents an adapter's Store as the Pipeline use cases'
// port.
func PipelineStoreOf(s Store) PipelineStore {
	return view[PipelineTx]{s, func(tx Tx) PipelineTx { return tx }}
}

// PeopleStoreOf presents an adapter's Store as the People and Sessions use
// cases' port.
func PeopleStoreOf(s Store) PeopleStore {
	return view[PeopleTx]{s, func(tx Tx) PeopleTx { return tx }}
}

// view is a Store whose InTx hands fn the transaction as a narrower port T.
// Go does not accept a func(DirectoryTx) where a func(Tx) is expected,
// although every Tx is a DirectoryTx, so narrow does that conversion (and
// the compiler checks it); the port's own interface type hides the other
// use cases' reads.
type view[T any] struct {
	Store
	narrow func(Tx) T
}

func (v view[T]) InTx(ctx context.Context, fn func(T) error) error {
	return v.Store.InTx(ctx, func(tx Tx) error { return fn(v.narrow(tx)) })
}
