// Package store is the vocabulary every service's store port shares: the
// errors adapters return, the clock and the id generator whose precision
// and order both adapters (memory and PostgreSQL) agree on.
//
// Services re-export the errors in their app package (app.ErrNotFound =
// store.ErrNotFound), so use cases never import an adapter's errors and
// platform/pgdb can translate driver errors for every service at once.
package store

import (
	"errors"
	"time"

	"github.com/google/uuid"
)

var (
	// ErrNotFound: no row matches, or a row a write refers to is missing.
	ErrNotFound = errors.New("not found")
	// ErrDuplicate: a unique rule already holds for another row.
	ErrDuplicate = errors.New("duplicate")
)

// Clock returns the current time. Use cases take one so tests can fix it.
type Clock func() time.Time

// Now is the clock's time in UTC at microsecond precision, the precision
// PostgreSQL keeps, so both adapters return identical timestamps.
func (c Clock) Now() time.Time { return c().UTC().Truncate(time.Microsecond) }

// NewID returns a time-ordered UUID (v7), which keeps b-tree inserts local
// and makes "newest first, ties by id" a stable order.
func NewID() string { return uuid.Must(uuid.NewV7()).String() }
