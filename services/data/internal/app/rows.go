package app

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/render"
	"github.com/atrium-hq/atrium/platform/value"
)

// Row is one dataset row. Data is the row object exactly as the API
// returns it; Keys holds the typed values of the spec's order and filter
// fields the row has (string, float64, bool or time.Time), for ordering and
// filtering without decoding Data.
type Row struct {
	ID        string
	ClientID  string
	Resource  string
	CreatedAt time.Time
	UpdatedAt time.Time
	Keys      map[string]any
	Data      json.RawMessage
}

// Query selects a page of one resource's rows of one client.
type Query struct {
	Resource, ClientID string
	// Agency, for a resource whose rows are an agency's (ByAgency), keeps
	// only the rows of this agency (Row.Agency): the page, the total and
	// the cursor positions alike. Ignored for other resources.
	Agency string
	Page   pagination.Page
	// Order is one of the resource's order fields; Asc reverses the default
	// largest first. Ties are broken by id in the same direction; rows
	// without a value sort after every value.
	Order string
	Asc   bool
	// FilterField and FilterValue (typed like Keys) keep the rows whose
	// field equals the value.
	FilterField string
	FilterValue any
	// After, when set, starts the page after that position (keyset
	// paging) instead of at Page.Offset.
	After *After
}

// keyForm is a checked value's form in Row.Keys: string, float64, bool or
// time.Time; nil for json, which is never a key.
func keyForm(v value.Value) any {
	switch v.Kind {
	case value.Number, value.Integer:
		return v.Num
	case value.Boolean:
		return v.Bool
	case value.Date, value.Timestamp:
		return timeOf(v)
	case value.JSON:
		return nil
	}
	return v.Str
}

// timeOf is a date or timestamp as stored: timestamps at PostgreSQL's
// microsecond precision.
func timeOf(v value.Value) time.Time {
	if v.Kind == value.Timestamp {
		return v.Time.Truncate(time.Microsecond)
	}
	return v.Time
}

// isKey reports whether a field's value is kept in Row.Keys: the order
// and filter fields, and the agency of a row that is an agency's.
func isKey(name string) bool {
	return slices.Contains(OrderFields, name) || slices.Contains(FilterFields, name) || name == AgencyField
}

// AgencyField is the field naming the agency a row of a ByAgency resource
// belongs to.
const AgencyField = "agency_id"

// Agency is the agency a row of a ByAgency resource belongs to: its
// agency_id, "" when it has none (then it is no agency's, and no read
// returns it).
func (r *Row) Agency() string {
	a, _ := r.Keys[AgencyField].(string)
	return a
}

// path names a field of the row at where ("rows[3]"), or the field alone
// when where is empty (a bulk load's line).
func path(where, field string) string {
	if where == "" {
		return field
	}
	return where + "." + field
}

// buildRow validates one row object of resource r (at where in the
// request, such as "rows[3]", for the error messages) and returns it with
// its id and timestamps filled in.
func buildRow(r *Resource, clientID, where string, obj map[string]any, now time.Time) (Row, error) {
	if obj == nil {
		return Row{}, apperr.Invalid("%s must be an object of %s's fields", cmp.Or(where, "the row"), r.Name)
	}
	fields := r.AllFields()
	for k := range obj {
		if _, ok := r.Field(k); !ok {
			names := make([]string, len(fields))
			for j, fd := range fields {
				names[j] = fd.Name
			}
			return Row{}, apperr.Invalid("%s is not a field of %s; its fields are: %s", path(where, k), r.Name, list(names))
		}
	}
	row := Row{ClientID: clientID, Resource: r.Name, Keys: map[string]any{}}
	out := render.NewWriter(256)
	out.Open()
	for _, fd := range fields {
		v, given := obj[fd.Name]
		if !given || v == nil {
			switch fd.Name {
			case "id":
				v = uuid.Must(uuid.NewV7()).String()
			case "created_at", "updated_at":
				if fd.Type == TDate {
					v = now.Format(time.DateOnly)
				} else {
					v = now.Format(time.RFC3339Nano)
				}
			}
		}
		rule := fd.rule()
		if fd.Required && value.Missing(v) {
			return Row{}, rule.Required(path(where, fd.Name))
		}
		out.Key(fd.Name)
		if v == nil {
			out.Null()
			continue
		}
		val, ok := rule.Check(v)
		if !ok {
			return Row{}, rule.Invalid(path(where, fd.Name), v)
		}
		switch val.Kind {
		case value.Number, value.Integer:
			out.Float(val.Num)
		case value.Boolean:
			out.Bool(val.Bool)
		case value.Timestamp:
			out.String(timeOf(val).Format(time.RFC3339Nano))
		case value.JSON:
			out.Raw(val.JSON)
		default:
			out.String(val.Str)
		}
		if isKey(fd.Name) {
			row.Keys[fd.Name] = keyForm(val)
		}
		switch fd.Name {
		case "id":
			row.ID = val.Str
		case "created_at":
			row.CreatedAt = timeOf(val)
		case "updated_at":
			row.UpdatedAt = timeOf(val)
		}
	}
	out.Close()
	row.Data = out.Bytes()
	return row, nil
}

// CompareKeys orders two key values of one field; nil (no value) sorts
// after every value, as PostgreSQL's NULLs do ascending.
func CompareKeys(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	switch x := a.(type) {
	case string:
		return strings.Compare(x, b.(string))
	case float64:
		return cmp.Compare(x, b.(float64))
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case time.Time:
		return x.Compare(b.(time.Time))
	}
	return 0
}

func keyOf(r *Row, field string) any {
	switch field {
	case "id":
		return r.ID
	case "created_at":
		return r.CreatedAt
	case "updated_at":
		return r.UpdatedAt
	}
	return r.Keys[field]
}

// SelectRows applies q to rows in memory: agency, filter, order (ties by
// id, no value after every value), count and page. The memory store and the
// clients resource use it; PostgreSQL does the same in SQL.
func SelectRows(rows []Row, q Query) ([]Row, int) {
	var kept []Row
	r, _ := Lookup(q.Resource)
	for i := range rows {
		if r != nil && r.ByAgency && rows[i].Agency() != q.Agency {
			continue
		}
		if q.FilterField == "" || CompareKeys(keyOf(&rows[i], q.FilterField), q.FilterValue) == 0 && keyOf(&rows[i], q.FilterField) != nil {
			kept = append(kept, rows[i])
		}
	}
	order := func(ak any, aid string, bk any, bid string) int {
		c := cmp.Or(CompareKeys(ak, bk), strings.Compare(aid, bid))
		if !q.Asc {
			c = -c
		}
		return c
	}
	slices.SortFunc(kept, func(a, b Row) int { return order(keyOf(&a, q.Order), a.ID, keyOf(&b, q.Order), b.ID) })
	total := len(kept)
	start := min(int(q.Page.Offset), total)
	if q.After != nil {
		start, _ = slices.BinarySearchFunc(kept, *q.After, func(r Row, a After) int {
			if order(keyOf(&r, q.Order), r.ID, a.Key, a.ID) <= 0 {
				return -1
			}
			return 1
		})
	}
	end := min(start+int(q.Page.Limit), total)
	return kept[start:end], total
}
