package app

import (
	"slices"
	"strings"

	"github.com/atrium-hq/atrium/platform/apperr"
)

// The item list's field projection (fields on ListItems): a list that
// shows a few fields of each item (the Studio's items table shows the
// title) asks for those, and the stores read, and the service renders,
// only them. The item's own properties (id, is_published, publish_at,
// unpublish_at, created_at, updated_at) are always listed.

// MaxProjectedFields bounds how many names fields may hold: a collection
// has at most MaxFields fields.
const MaxProjectedFields = MaxFields

// maxFieldsParam bounds the fields parameter in bytes (MaxProjectedFields
// keys of a few dozen characters each).
const maxFieldsParam = 10_000

// itemProperties are the names every listed item carries whatever fields
// asks for; naming them in fields is allowed and changes nothing.
var itemProperties = []string{"id", "is_published", "publish_at", "unpublish_at", "created_at", "updated_at"}

// Projection is the fields of a collection a list returns, in the
// collection's order; nil means every field.
type Projection []Field

// Keys are the projection's field keys.
func (p Projection) Keys() []string {
	keys := make([]string, len(p))
	for i, f := range p {
		keys[i] = f.Key
	}
	return keys
}

// ParseProjection reads the fields parameter (comma-separated field keys)
// against c. The top-level fields expand names are added: expanding a
// reference needs its id. An empty fields is every field (nil).
func ParseProjection(c Collection, fields, expand string) (Projection, error) {
	if fields == "" {
		return nil, nil
	}
	if len(fields) > maxFieldsParam {
		return nil, apperr.Invalid("fields must be at most %d characters; got %d", maxFieldsParam, len(fields))
	}
	names := strings.Split(fields, ",")
	if len(names) > MaxProjectedFields {
		return nil, apperr.Invalid("fields names at most %d fields; got %d", MaxProjectedFields, len(names))
	}
	want := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if slices.Contains(itemProperties, n) {
			continue
		}
		if _, ok := c.Field(n); !ok {
			return nil, apperr.Invalid("Invalid fields entry %q. Allowed: %s (and the item's own %s, always listed)",
				n, fieldList(c), strings.Join(itemProperties, ", "))
		}
		want[n] = true
	}
	if expand != "" {
		for _, path := range strings.Split(expand, ",") {
			top, _, _ := strings.Cut(strings.TrimSpace(path), ".")
			want[top] = true
		}
	}
	p := Projection{}
	for _, f := range c.Fields {
		if want[f.Key] {
			p = append(p, f)
		}
	}
	return p, nil
}

// Project keeps of values the projection's fields (all of them when p is
// nil).
func (p Projection) Project(values Values) Values {
	if p == nil {
		return values
	}
	out := make(Values, len(p))
	for _, f := range p {
		if v, ok := values[f.Key]; ok {
			out[f.Key] = v
		}
	}
	return out
}
