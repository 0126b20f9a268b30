package pagination

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"

	"github.com/atrium-hq/atrium/platform/apperr"
)

// A cursor is an opaque keyset position (the id of the last row of a page,
// say) bound to the query it belongs to: a client sends it back to get the
// page after, and a cursor sent with other parameters is refused rather
// than silently read as a position in another list. Clients see base64url
// of a small JSON object; what it holds is not part of the API.
type cursor struct {
	Query    string `json:"q"` // a hash of the query's parameters
	Position string `json:"p"`
}

// Cursor returns the cursor of position within the query whose parameters
// are params (any values that identify it: the tenant, the list, its
// filters and order).
func Cursor(position string, params ...string) string {
	b, _ := json.Marshal(cursor{Query: queryHash(params), Position: position})
	return base64.RawURLEncoding.EncodeToString(b)
}

// ReadCursor returns the position a cursor holds if it belongs to the query
// of params. boundTo names those parameters for the 400 ("the webhook and
// status"); the other 400 says the cursor was altered.
func ReadCursor(s, boundTo string, params ...string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	var c cursor
	if err != nil || json.Unmarshal(b, &c) != nil || c.Position == "" {
		return "", apperr.Invalid("cursor is malformed: send back next_cursor exactly as received, or no cursor for the first page")
	}
	if c.Query != queryHash(params) {
		return "", apperr.Invalid("cursor belongs to another query: it is bound to %s it came with; send the same ones, or start again without a cursor", boundTo)
	}
	return c.Position, nil
}

// queryHash is short: it tells queries apart, it does not protect anything
// (a cursor only moves its holder within lists it may read anyway).
func queryHash(params []string) string {
	h := sha256.New()
	for _, p := range params {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:9])
}
