package app

import (
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/value"
)

// After is a keyset position: the order key and id of the last row read.
// Rows after it in the query's order come next.
type After struct {
	Key any // nil when the last row had no value
	ID  string
}

// cursorToken is what a cursor carries: the query it belongs to and the
// position. It is opaque to clients (base64url of this JSON); a forged one
// can only move the reader within data it may read anyway, and every field
// is checked before use: the position's key must be a value of the order
// field and its id a UUID, as the store would otherwise refuse them (a
// fault, not a bad request).
type cursorToken struct {
	Resource string `json:"r"`
	ClientID string `json:"c,omitempty"`
	Filter   string `json:"f,omitempty"`
	Value    string `json:"v,omitempty"`
	Order    string `json:"o"`
	Asc      bool   `json:"a,omitempty"`
	KeyType  string `json:"t,omitempty"` // s, n, b, t; empty for no value
	Key      string `json:"k,omitempty"`
	ID       string `json:"i"`
}

func encodeKey(v any) (string, string) {
	switch v := v.(type) {
	case string:
		return "s", v
	case float64:
		b, _ := json.Marshal(v)
		return "n", string(b)
	case bool:
		if v {
			return "b", "true"
		}
		return "b", "false"
	case time.Time:
		return "t", v.UTC().Format(time.RFC3339Nano)
	}
	return "", ""
}

// decodeKey reads a position's key as a value of the order field fd: the
// type it was written with (encodeKey) and a value the field accepts, or
// no value.
func decodeKey(fd Field, typ, s string) (any, bool) {
	if typ == "" {
		return nil, true
	}
	rule := fd.rule()
	want := "s"
	switch fd.Type {
	case TNumber, TInteger:
		want = "n"
	case TBoolean:
		want = "b"
	case TDate, TTimestamp:
		// Both are written as timestamps: a date is its midnight UTC.
		want, rule = "t", value.Rule{Kind: value.Timestamp}
	}
	if typ != want {
		return nil, false
	}
	v, ok := value.ParseQuery(rule.Kind, s)
	if !ok {
		return nil, false
	}
	val, ok := rule.Check(v)
	if !ok {
		return nil, false
	}
	return keyForm(val), true
}

// nextCursor is the cursor after last for the query q was read with.
func nextCursor(p ReadParams, q Query, last *Row) string {
	typ, key := encodeKey(keyOf(last, q.Order))
	b, _ := json.Marshal(cursorToken{Resource: q.Resource, ClientID: q.ClientID, Filter: p.FilterField, Value: p.FilterValue,
		Order: q.Order, Asc: q.Asc, KeyType: typ, Key: key, ID: last.ID})
	return base64.RawURLEncoding.EncodeToString(b)
}

var malformed = apperr.Invalid("cursor is malformed: send back pagination.next_cursor exactly as received")

// readCursor checks that cursor belongs to this query of resource r and
// returns its position.
func readCursor(cursor string, r *Resource, p ReadParams, q Query) (*After, error) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	var tok cursorToken
	if err != nil || json.Unmarshal(b, &tok) != nil || tok.ID == "" {
		return nil, malformed
	}
	if tok.Resource != q.Resource || tok.ClientID != q.ClientID || tok.Filter != p.FilterField || tok.Value != p.FilterValue ||
		tok.Order != q.Order || tok.Asc != q.Asc {
		return nil, apperr.Invalid("cursor belongs to another query: it is bound to the resource, client_id, filter, order and direction it came from; send the same ones, or start again without a cursor")
	}
	fd, _ := r.Field(q.Order)
	key, ok := decodeKey(fd, tok.KeyType, tok.Key)
	id, isID := value.ParseID(tok.ID)
	if !ok || !isID {
		return nil, malformed
	}
	return &After{Key: key, ID: id}, nil
}
