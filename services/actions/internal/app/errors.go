package app

import "github.com/atrium-hq/atrium/platform/store"

// Store errors, shared with every service.
var (
	ErrNotFound  = store.ErrNotFound
	ErrDuplicate = store.ErrDuplicate
)
