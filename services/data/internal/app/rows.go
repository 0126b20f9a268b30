package app

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/render"
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
	Page               pagination.Page
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

// maxText bounds a string value; maxJSON a json value, encoded.
const (
	maxText = 100_000
	maxJSON = 200_000
)

func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if utf8.RuneCountInString(v) > 40 {
			return fmt.Sprintf("a string of %d characters", utf8.RuneCountInString(v))
		}
		return fmt.Sprintf("%q", v)
	case float64:
		b, _ := json.Marshal(v)
		return "the number " + string(b)
	case bool:
		return fmt.Sprint(v)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

var expected = map[string]string{
	TString: "a string", TNumber: "a number", TInteger: "an integer", TBoolean: "true or false",
	TDate: "a date YYYY-MM-DD", TTimestamp: "an RFC 3339 timestamp such as 2026-01-02T15:04:05Z",
	TURL: "an absolute http or https URL", TUUID: "a UUID",
	TJSON: "a JSON value (object, array, string, number or boolean) of at most 200,000 bytes encoded",
}

// typed checks v against the field and returns its key form (string,
// float64, bool, time.Time; none for json) and its JSON form (a string, a
// finite float64, a bool, or encoded json.RawMessage).
func typed(fd Field, v any) (any, any, bool) {
	switch fd.Type {
	case TString:
		s, ok := v.(string)
		return s, s, ok && utf8.RuneCountInString(s) <= maxText
	case TNumber:
		n, ok := v.(float64)
		return n, n, ok && !math.IsNaN(n) && !math.IsInf(n, 0)
	case TInteger:
		n, ok := v.(float64)
		return n, n, ok && n == math.Trunc(n) && math.Abs(n) <= 1<<53
	case TBoolean:
		b, ok := v.(bool)
		return b, b, ok
	case TDate:
		s, ok := v.(string)
		t, err := time.Parse(time.DateOnly, s)
		return t, s, ok && err == nil && t.Year() >= 1
	case TTimestamp:
		s, ok := v.(string)
		t, err := time.Parse(time.RFC3339Nano, s)
		t = t.UTC().Truncate(time.Microsecond)
		return t, t.Format(time.RFC3339Nano), ok && err == nil
	case TURL:
		s, ok := v.(string)
		u, err := url.Parse(s)
		return s, s, ok && err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && len(s) <= 2048
	case TUUID:
		s, ok := v.(string)
		id, err := uuid.Parse(s)
		return id.String(), id.String(), ok && err == nil && len(s) == 36
	case TJSON:
		// Values come from a decoded JSON or protobuf Struct, so they are
		// JSON already; encoding refuses what is not (NaN from a Struct).
		b, err := render.Marshal(v)
		return nil, json.RawMessage(b), err == nil && len(b) <= maxJSON
	}
	return nil, nil, false
}

// isKey reports whether a field's value is kept in Row.Keys.
func isKey(name string) bool {
	return slices.Contains(OrderFields, name) || slices.Contains(FilterFields, name)
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
			default:
				if fd.Required {
					return Row{}, apperr.Invalid("%s is required: %s", path(where, fd.Name), expected[fd.Type])
				}
			}
		}
		out.Key(fd.Name)
		if v == nil {
			out.Null()
			continue
		}
		key, js, ok := typed(fd, v)
		if !ok {
			return Row{}, apperr.Invalid("%s must be %s; got %s", path(where, fd.Name), expected[fd.Type], describe(v))
		}
		if isKey(fd.Name) {
			row.Keys[fd.Name] = key
		}
		switch fd.Name {
		case "id":
			row.ID = key.(string)
		case "created_at":
			row.CreatedAt = key.(time.Time)
		case "updated_at":
			row.UpdatedAt = key.(time.Time)
		}
		switch js := js.(type) {
		case string:
			out.String(js)
		case float64:
			out.Float(js)
		case bool:
			out.Bool(js)
		case json.RawMessage:
			out.Raw(js)
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

// SelectRows applies q to rows in memory: filter, order (ties by id, no
// value after every value), count and page. The memory store and the
// clients resource use it; PostgreSQL does the same in SQL.
func SelectRows(rows []Row, q Query) ([]Row, int) {
	var kept []Row
	for i := range rows {
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
		start = 0
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
