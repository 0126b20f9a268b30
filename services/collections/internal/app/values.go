package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/render"
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

type reference struct {
	field, target, id string
}

// checkData validates data (decoded JSON: nil, bool, float64, string,
// []any, map[string]any) against the collection's fields. On create every
// required field must be present and non-null; on update only the given
// fields are checked, and a null clears an optional field.
func checkData(c Collection, data map[string]any, create bool) (change, error) {
	ch := change{set: Values{}}
	for _, k := range sortedKeys(data) {
		f, ok := c.Field(k)
		if !ok {
			return change{}, apperr.Invalid("data.%s is not a field of collection %q; its fields are: %s", k, c.Slug, fieldList(c))
		}
		v := data[k]
		if v == nil {
			if f.Required {
				return change{}, apperr.Invalid("data.%s is required and cannot be null", k)
			}
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
		if f.Type == TypeReference {
			ch.refs = append(ch.refs, reference{field: k, target: f.Target, id: v.(string)})
		}
	}
	if create {
		for _, f := range c.Fields {
			if _, ok := ch.set[f.Key]; f.Required && !ok {
				return change{}, apperr.Invalid("data.%s is required: %s", f.Key, expected(f))
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

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// expected says in words what a field accepts.
func expected(f Field) string {
	switch f.Type {
	case TypeText, TypeRichText:
		return fmt.Sprintf("a %s string of at most %d characters", f.Type, maxLength(f))
	case TypeNumber:
		return "a number"
	case TypeInteger:
		return "an integer (a whole number within ±2^53)"
	case TypeBoolean:
		return "true or false"
	case TypeDate:
		return "a date string YYYY-MM-DD"
	case TypeDatetime:
		return "an RFC 3339 date-time string such as 2026-01-02T15:04:05Z"
	case TypeEmail:
		return "an email address such as ana@example.com"
	case TypeURL:
		return "an absolute http or https URL"
	case TypeSelect:
		return "one of: " + strings.Join(f.Options, ", ")
	case TypeMultiSelect:
		return "an array of distinct values from: " + strings.Join(f.Options, ", ")
	case TypeJSON:
		return "any JSON value"
	case TypeReference:
		return fmt.Sprintf("the id (a UUID) of an item of collection %q", f.Target)
	}
	return f.Type
}

func maxLength(f Field) int {
	if f.MaxLength > 0 {
		return f.MaxLength
	}
	return defaultMaxLength[f.Type]
}

// describe names what a client sent, for "got ...".
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return fmt.Sprint(v)
	case float64:
		return "the number " + formatNumber(v)
	case string:
		if utf8.RuneCountInString(v) > 40 {
			return fmt.Sprintf("a string of %d characters", utf8.RuneCountInString(v))
		}
		return fmt.Sprintf("%q", v)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func formatNumber(v float64) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// checkValue validates a non-null value of field f and returns its JSON.
func checkValue(f Field, v any) (json.RawMessage, error) {
	bad := func() (json.RawMessage, error) {
		return nil, apperr.Invalid("data.%s must be %s; got %s", f.Key, expected(f), describe(v))
	}
	switch f.Type {
	case TypeText, TypeRichText, TypeEmail, TypeURL:
		s, ok := v.(string)
		if !ok || utf8.RuneCountInString(s) > maxLength(f) {
			return bad()
		}
		switch f.Type {
		case TypeText:
			if strings.ContainsFunc(s, func(r rune) bool { return isControl(r) && r != '\t' && r != '\n' && r != '\r' }) {
				return nil, apperr.Invalid("data.%s must not contain control characters other than tab and newlines", f.Key)
			}
		case TypeEmail:
			a, err := mail.ParseAddress(s)
			if err != nil || a.Address != s || a.Name != "" {
				return bad()
			}
		case TypeURL:
			u, err := url.Parse(s)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return bad()
			}
		}
	case TypeNumber:
		n, ok := v.(float64)
		if !ok || math.IsNaN(n) || math.IsInf(n, 0) {
			return bad()
		}
	case TypeInteger:
		n, ok := v.(float64)
		if !ok || n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return bad()
		}
	case TypeBoolean:
		if _, ok := v.(bool); !ok {
			return bad()
		}
	case TypeDate:
		s, ok := v.(string)
		if t, err := time.Parse(time.DateOnly, s); !ok || err != nil || t.Year() < 1 {
			return bad()
		}
	case TypeDatetime:
		s, ok := v.(string)
		t, err := time.Parse(time.RFC3339Nano, s)
		if !ok || err != nil {
			return bad()
		}
		// Stored in UTC so that equal instants compare equal in filters and order.
		v = t.UTC().Format(time.RFC3339Nano)
	case TypeSelect:
		s, ok := v.(string)
		if !ok || !slices.Contains(f.Options, s) {
			return bad()
		}
	case TypeMultiSelect:
		list, ok := v.([]any)
		if !ok {
			return bad()
		}
		seen := map[string]bool{}
		for _, e := range list {
			s, ok := e.(string)
			if !ok || !slices.Contains(f.Options, s) || seen[s] {
				return bad()
			}
			seen[s] = true
		}
	case TypeJSON:
		// any value
	case TypeReference:
		s, ok := v.(string)
		if id, err := uuid.Parse(s); !ok || err != nil || len(s) != 36 || id.String() != strings.ToLower(s) {
			return bad()
		}
		v = strings.ToLower(s)
	}
	raw, err := render.Marshal(v)
	if err != nil {
		return nil, apperr.Invalid("data.%s cannot be encoded as JSON: %v", f.Key, err)
	}
	return raw, nil
}

// parseFilterValue reads a filter value (a query string) as the field's
// type and returns its JSON.
func parseFilterValue(f Field, s string) (json.RawMessage, error) {
	var v any = s
	switch f.Type {
	case TypeNumber, TypeInteger:
		var n float64
		if err := json.Unmarshal([]byte(s), &n); err != nil {
			return nil, apperr.Invalid("filter_value for %s must be %s; got %q", f.Key, expected(f), s)
		}
		v = n
	case TypeBoolean:
		switch s {
		case "true":
			v = true
		case "false":
			v = false
		default:
			return nil, apperr.Invalid("filter_value for %s must be true or false; got %q", f.Key, s)
		}
	case TypeJSON, TypeMultiSelect, TypeRichText:
		return nil, apperr.Invalid("filter_field %s is a %s field, which cannot be filtered; filterable types: text, number, integer, boolean, date, datetime, email, url, select, reference", f.Key, f.Type)
	}
	raw, err := checkValue(f, v)
	if err != nil {
		return nil, apperr.Invalid("filter_value for %s must be %s; got %q", f.Key, expected(f), s)
	}
	return raw, nil
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
