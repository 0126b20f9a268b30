package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/render"
	"github.com/atrium-hq/atrium/platform/value"
)

// Values are an item's field values, each as its JSON encoding. Absent
// keys are unset fields (shown as null).
type Values map[string]json.RawMessage

// change is a validated write of item data: the values to set, the keys to
// clear, and the references to check in the transaction.
type change struct {
	set   Values
	unset []string
	refs  []reference
}

// reference is a value that must name something of the site when it is
// written: an item of the target collection, or (asset) an asset.
type reference struct {
	field, target, id string
	asset             bool
}

// checkData validates data (decoded JSON: nil, bool, float64, string,
// []any, map[string]any) against the collection's fields. On create every
// required field must be present and not missing (value.Missing: null or
// a blank string); on update only the given fields are checked, and a
// null clears an optional field.
func checkData(c Collection, data map[string]any, create bool) (change, error) {
	ch := change{set: Values{}}
	for _, k := range slices.Sorted(maps.Keys(data)) {
		f, ok := c.Field(k)
		if !ok {
			return change{}, apperr.Invalid("data.%s is not a field of collection %q; its fields are: %s", k, c.Slug, fieldList(c))
		}
		v := data[k]
		if f.Required && value.Missing(v) {
			return change{}, value.Required("data."+k, expected(f))
		}
		if v == nil {
			if !create {
				ch.unset = append(ch.unset, k)
			}
			continue
		}
		raw, err := checkValue(f, v)
		if err != nil {
			return change{}, err
		}
		ch.set[k] = raw
		switch f.Type {
		case TypeReference:
			ch.refs = append(ch.refs, reference{field: k, target: f.Target, id: canonicalID(raw)})
		case TypeAsset:
			ch.refs = append(ch.refs, reference{field: k, id: canonicalID(raw), asset: true})
		}
	}
	if create {
		for _, f := range c.Fields {
			if _, ok := ch.set[f.Key]; f.Required && !ok {
				return change{}, value.Required("data."+f.Key, expected(f))
			}
		}
	}
	return ch, nil
}

func fieldList(c Collection) string {
	if len(c.Fields) == 0 {
		return "(none)"
	}
	return strings.Join(c.FieldKeys(), ", ")
}

// rule is the platform's rule for a field type that is one of the shared
// kinds; select and multi_select are collections' own (strings from a
// list), and a reference is a UUID with more to it (see expected).
func (f Field) rule() value.Rule {
	switch f.Type {
	case TypeText:
		return value.Rule{Kind: value.String, Max: maxLength(f), Lines: value.MultiLine}
	case TypeRichText:
		return value.Rule{Kind: value.String, Max: maxLength(f)}
	case TypeNumber:
		return value.Rule{Kind: value.Number}
	case TypeInteger:
		return value.Rule{Kind: value.Integer}
	case TypeBoolean:
		return value.Rule{Kind: value.Boolean}
	case TypeDate:
		return value.Rule{Kind: value.Date}
	case TypeDatetime:
		return value.Rule{Kind: value.Timestamp}
	case TypeEmail:
		return value.Rule{Kind: value.Email, Max: maxLength(f)}
	case TypeURL:
		return value.Rule{Kind: value.URL, Max: maxLength(f)}
	case TypeJSON:
		return value.Rule{Kind: value.JSON}
	case TypeReference, TypeAsset:
		return value.Rule{Kind: value.UUID}
	}
	return value.Rule{Kind: value.String}
}

// expected says in words what a field accepts.
func expected(f Field) string {
	switch f.Type {
	case TypeSelect:
		return "one of: " + strings.Join(f.Options, ", ")
	case TypeMultiSelect:
		return "an array of distinct values from: " + strings.Join(f.Options, ", ")
	case TypeReference:
		return fmt.Sprintf("the id (a UUID) of an item of collection %q", f.Target)
	case TypeAsset:
		return "the id (a UUID) of an asset of this site"
	}
	return f.rule().Expected()
}

func maxLength(f Field) int {
	if f.MaxLength > 0 {
		return f.MaxLength
	}
	return defaultMaxLength[f.Type]
}

// checkValue validates a non-null value of field f and returns its JSON.
func checkValue(f Field, v any) (json.RawMessage, error) {
	switch f.Type {
	case TypeSelect:
		if s, ok := v.(string); !ok || !slices.Contains(f.Options, s) {
			return nil, value.Invalid("data."+f.Key, expected(f), v)
		}
	case TypeMultiSelect:
		list, ok := v.([]any)
		if !ok {
			return nil, value.Invalid("data."+f.Key, expected(f), v)
		}
		seen := map[string]bool{}
		for _, e := range list {
			s, ok := e.(string)
			if !ok || !slices.Contains(f.Options, s) || seen[s] {
				return nil, value.Invalid("data."+f.Key, expected(f), v)
			}
			seen[s] = true
		}
	default:
		val, ok := f.rule().Check(v)
		if !ok {
			return nil, value.Invalid("data."+f.Key, expected(f), v)
		}
		switch val.Kind {
		case value.JSON:
			return val.JSON, nil
		case value.Timestamp:
			// Stored in UTC so that equal instants compare equal in filters and order.
			v = val.Time.Format(time.RFC3339Nano)
		case value.UUID:
			if val.Str != v.(string) {
				v = val.Str // the canonical lower case
			}
		}
	}
	raw, err := render.Marshal(v)
	if err != nil {
		return nil, apperr.Invalid("data.%s cannot be encoded as JSON: %v", f.Key, err)
	}
	return raw, nil
}

// canonicalID is the id a checked UUID value holds, in lower case.
func canonicalID(raw json.RawMessage) string {
	var id string
	_ = json.Unmarshal(raw, &id)
	return id
}

// parseFilterValue reads a filter value (a query string) as the field's
// type and returns its JSON.
func parseFilterValue(f Field, s string) (json.RawMessage, error) {
	switch f.Type {
	case TypeJSON, TypeMultiSelect, TypeRichText:
		return nil, apperr.Invalid("filter_field %s is a %s field, which cannot be filtered; filterable types: text, number, integer, boolean, date, datetime, email, url, select, reference, asset", f.Key, f.Type)
	}
	if v, ok := value.ParseQuery(f.rule().Kind, s); ok {
		if raw, err := checkValue(f, v); err == nil {
			return raw, nil
		}
	}
	return nil, value.InvalidFilter(f.Key, expected(f), s)
}

// CompareValues orders two stored values of one sortable field: numbers by
// value, booleans false first, strings by their UTF-8 bytes (dates and
// UTC date-times sort chronologically that way); an absent value (nil)
// sorts after every value. It is the memory store's order and matches the
// PostgreSQL store's.
func CompareValues(a, b json.RawMessage) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	var x, y any
	_ = json.Unmarshal(a, &x)
	_ = json.Unmarshal(b, &y)
	switch x := x.(type) {
	case float64:
		if y, ok := y.(float64); ok {
			return cmpOrdered(x, y)
		}
	case bool:
		if y, ok := y.(bool); ok {
			return cmpOrdered(boolRank(x), boolRank(y))
		}
	case string:
		if y, ok := y.(string); ok {
			return strings.Compare(x, y)
		}
	}
	return bytes.Compare(a, b)
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func cmpOrdered[T int | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
