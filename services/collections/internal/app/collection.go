package app

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/value"
)

// Collection is a content collection of a site: a name, an API slug and the
// definitions of the fields its items carry.
type Collection struct {
	ID       string
	SiteID   string
	Name     string
	Slug     string
	IsSystem bool
	Fields   []Field
	// SearchLanguage is the text search configuration q searches with
	// (SearchLanguages); never empty.
	SearchLanguage string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Field is the definition of an item field.
type Field struct {
	Key      string   `json:"key"`
	Type     string   `json:"type"`
	Required bool     `json:"required"`
	Options  []string `json:"options,omitempty"`
	// Target is the slug of the collection a reference points into.
	Target string `json:"target,omitempty"`
	// MaxLength bounds text-like values in characters; 0 means the type's
	// default.
	MaxLength int `json:"max_length,omitempty"`
	// Localized fields hold a value per locale of the site (locales.go);
	// only LocalizableTypes may be.
	Localized bool `json:"localized,omitempty"`
}

// Field types. Every one is documented in docs/collections.md.
const (
	TypeText        = "text"
	TypeRichText    = "rich_text"
	TypeNumber      = "number"
	TypeInteger     = "integer"
	TypeBoolean     = "boolean"
	TypeDate        = "date"
	TypeDatetime    = "datetime"
	TypeEmail       = "email"
	TypeURL         = "url"
	TypeSelect      = "select"
	TypeMultiSelect = "multi_select"
	TypeJSON        = "json"
	TypeReference   = "reference"
	TypeAsset       = "asset"
)

// FieldTypes are the field types, in the order the docs list them.
var FieldTypes = []string{TypeText, TypeRichText, TypeNumber, TypeInteger, TypeBoolean, TypeDate, TypeDatetime,
	TypeEmail, TypeURL, TypeSelect, TypeMultiSelect, TypeJSON, TypeReference, TypeAsset}

// defaultMaxLength is the length bound of text-like types when the field
// sets none; limitMaxLength is the most a field may set.
var defaultMaxLength = map[string]int{TypeText: 10_000, TypeRichText: 500_000, TypeEmail: value.MaxEmail, TypeURL: value.MaxURL}

const limitMaxLength = 500_000

// maxLengthLimit is the most a field of type t may set as max_length: a
// URL or an email is never longer than the platform's rule allows.
func maxLengthLimit(t string) int {
	switch t {
	case TypeURL:
		return value.MaxURL
	case TypeEmail:
		return value.MaxEmail
	}
	return limitMaxLength
}

// ReservedKeys are the item properties every item has; no field may use them.
var ReservedKeys = []string{"id", "is_published", "publish_at", "unpublish_at", "created_at", "updated_at"}

// SortableTypes are the types a list may be ordered by (besides created_at
// and updated_at).
var SortableTypes = []string{TypeText, TypeNumber, TypeInteger, TypeDate, TypeDatetime, TypeEmail, TypeURL, TypeSelect, TypeBoolean}

var (
	keyPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
)

// Sortable reports whether items can be ordered by f (SortableTypes).
func (f Field) Sortable() bool { return slices.Contains(SortableTypes, f.Type) }

// Field returns the field with key k.
func (c Collection) Field(k string) (Field, bool) {
	i := slices.IndexFunc(c.Fields, func(f Field) bool { return f.Key == k })
	if i < 0 {
		return Field{}, false
	}
	return c.Fields[i], true
}

// FieldKeys lists the collection's field keys in definition order.
func (c Collection) FieldKeys() []string {
	keys := make([]string, len(c.Fields))
	for i, f := range c.Fields {
		keys[i] = f.Key
	}
	return keys
}

// isSlug reports whether s is a collection slug: 1 to 64 lower case
// letters, digits, dashes and underscores, starting with a letter or
// digit. Written out rather than as a regular expression: every item
// request checks its path's slug.
func isSlug(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || i > 0 && (c == '-' || c == '_')) {
			return false
		}
	}
	return true
}

// checkSlug validates a collection slug.
func checkSlug(slug string) error {
	if !isSlug(slug) {
		return apperr.Invalid("slug must be 1 to 64 lower case letters, digits, dashes and underscores, starting with a letter or digit; got %q", slug)
	}
	return nil
}

// checkName validates a display name.
func checkName(field, v string) (string, error) { return value.Line(field, v, 200, false) }

// checkDefinition validates one field definition on its own; where names
// which definition it is ("fields[2]").
func checkDefinition(where string, f *Field) error {
	if !keyPattern.MatchString(f.Key) {
		return apperr.Invalid("%s.key must be 1 to 64 lower case letters, digits and underscores, starting with a letter; got %q", where, f.Key)
	}
	if slices.Contains(ReservedKeys, f.Key) {
		return apperr.Invalid("%s.key %q is reserved: every item has %s", where, f.Key, strings.Join(ReservedKeys, ", "))
	}
	if !slices.Contains(FieldTypes, f.Type) {
		return apperr.Invalid("%s.type must be one of: %s; got %q", where, strings.Join(FieldTypes, ", "), f.Type)
	}
	isSelect := f.Type == TypeSelect || f.Type == TypeMultiSelect
	switch {
	case isSelect && len(f.Options) == 0:
		return apperr.Invalid("%s (%s) needs options: the values it allows", where, f.Type)
	case !isSelect && len(f.Options) > 0:
		return apperr.Invalid("%s: options apply only to select and multi_select fields, not %s", where, f.Type)
	case f.Type == TypeReference && f.Target == "":
		return apperr.Invalid("%s (reference) needs target: the slug of the collection it points into", where)
	case f.Type != TypeReference && f.Target != "":
		return apperr.Invalid("%s: target applies only to reference fields, not %s", where, f.Type)
	}
	if f.MaxLength != 0 {
		if _, ok := defaultMaxLength[f.Type]; !ok {
			return apperr.Invalid("%s: max_length applies only to text, rich_text, email and url fields, not %s", where, f.Type)
		}
		if limit := maxLengthLimit(f.Type); f.MaxLength < 1 || f.MaxLength > limit {
			return apperr.Invalid("%s.max_length of a %s field must be from 1 to %d; got %d", where, f.Type, limit, f.MaxLength)
		}
	}
	if f.Localized && !slices.Contains(LocalizableTypes, f.Type) {
		return apperr.Invalid("%s: only %s fields can be localized, not %s", where, strings.Join(LocalizableTypes, " and "), f.Type)
	}
	seen := map[string]bool{}
	for i, o := range f.Options {
		if o == "" || !value.Text(o, 200, value.OneLine) {
			return apperr.Invalid("%s.options[%d] must be 1 to 200 characters on one line without control characters; got %q", where, i, o)
		}
		if seen[o] {
			return apperr.Invalid("%s.options lists %q twice", where, o)
		}
		seen[o] = true
	}
	if f.Target != "" {
		if err := checkSlug(f.Target); err != nil {
			return apperr.Invalid("%s.target must be a collection slug; got %q", where, f.Target)
		}
	}
	return nil
}

// MaxFields is how many fields a collection may define. The requests
// that carry fields or an item's data declare the same maximum in the
// proto (max_items), which the server chain enforces on each request; this
// is the rule on the collection as a whole (fields added to those it has).
// A test holds the two to one number.
const MaxFields = 200

// checkDefinitions validates a collection's whole field list.
func checkDefinitions(fields []Field) error {
	if len(fields) > MaxFields {
		return apperr.Invalid("a collection has at most %d fields; got %d", MaxFields, len(fields))
	}
	seen := map[string]bool{}
	for i := range fields {
		if err := checkDefinition(fmt.Sprintf("fields[%d]", i), &fields[i]); err != nil {
			return err
		}
		if seen[fields[i].Key] {
			return apperr.Invalid("fields[%d].key %q is defined twice", i, fields[i].Key)
		}
		seen[fields[i].Key] = true
	}
	return nil
}
