// Package pagination parses and checks the paging parameters of Atrium's
// list endpoints (limit and offset, and opaque cursors bound to their
// query), so that every list explains a bad value the same way.
package pagination

import "github.com/atrium-hq/atrium/platform/apperr"

// Policy is the limit rule of one list endpoint.
type Policy struct {
	// DefaultLimit applies when the caller sends no limit.
	DefaultLimit int32
	// MaxLimit is the largest page.
	MaxLimit int32
	// Clamp makes a limit above MaxLimit return MaxLimit records instead of
	// failing.
	Clamp bool
}

// Admin is the policy of the admin API's lists (keys, agencies, clients,
// sites): pages of 50 by default, larger limits capped at 200.
var Admin = Policy{DefaultLimit: 50, MaxLimit: 200, Clamp: true}

// Page is a checked limit and offset.
type Page struct {
	Limit  int32
	Offset int32
}

// Parse applies the policy to the caller's optional limit and offset.
func (p Policy) Parse(limit, offset *int32) (Page, error) {
	pg := Page{Limit: p.DefaultLimit}
	if limit != nil {
		switch l := *limit; {
		case l < 1 && p.Clamp:
			return Page{}, apperr.Invalid("limit must be an integer of at least 1 (default %d; values above %d return %d records); got %d", p.DefaultLimit, p.MaxLimit, p.MaxLimit, l)
		case l < 1 || (l > p.MaxLimit && !p.Clamp):
			return Page{}, apperr.Invalid("limit must be an integer from 1 to %d (default %d); got %d", p.MaxLimit, p.DefaultLimit, l)
		case l > p.MaxLimit:
			pg.Limit = p.MaxLimit
		default:
			pg.Limit = l
		}
	}
	if offset != nil {
		if *offset < 0 {
			return Page{}, apperr.Invalid("offset must be an integer of 0 or more (default 0); got %d", *offset)
		}
		pg.Offset = *offset
	}
	return pg, nil
}
