package action

import (
	"context"
	"slices"
)

// Field types of action fields, as discovery names them.
const (
	TString  = "string"
	TInteger = "integer"
	TNumber  = "number"
	TBoolean = "boolean"
	TArray   = "array" // of strings
	// TPeriod is a reporting period: "last_month", "last_week" or an
	// object {"from", "to"} of dates (generate_report.period). Its Check
	// and Schema say the rest.
	TPeriod = "period"
)

// String formats.
const (
	FormatURL   = "url"
	FormatEmail = "email"
	FormatUUID  = "uuid"
	FormatHTML  = "html"
)

// Field is one action-specific field of a request: its type, format,
// bounds and allowed values. Validation, discovery and docs/actions.md all
// read it.
type Field struct {
	Name        string
	Type        string
	Format      string
	Description string
	Required    bool
	// Enum lists the allowed values of a string field.
	Enum []string
	// Min and Max bound a number or integer field.
	Min, Max *float64
	// MaxLength bounds a string, or each item of an array, in characters.
	// A blank string is never a value: for a required field it is missing,
	// for an optional one absent.
	MaxLength int
	// Multiline marks a string that may hold line breaks and any other
	// character a store can hold (value.AnyText: all but NUL); every other
	// string is one line without control characters (value.OneLine).
	Multiline bool
	// MaxItems bounds an array.
	MaxItems int
	// Default is the value of an absent field, nil if none.
	Default any
	// Fetched marks a URL the service itself fetches: addresses on private
	// networks are refused (an audit is otherwise an SSRF door).
	Fetched bool
	// Known, when set, asks a provider whether it can answer for the
	// field's value (a location the SEO data provider has figures for),
	// once the value passed the checks above and before anything is
	// reserved: nil when it can, or when the provider cannot tell now (the
	// run goes ahead and the provider's answer decides); a *provider.Error
	// with status 400 whose message says what is accepted when it cannot,
	// which the request answers as a 400 naming the field.
	Known func(ctx context.Context, p *Providers, v any) error
	// Check, for a field of a type the platform's value rules do not cover
	// (TPeriod), checks a present value and returns its Input form, or a
	// 400 naming name and saying what is allowed; Schema is then its JSON
	// Schema, which discovery, OpenAPI and MCP publish.
	Check  func(name string, v any) (any, error)
	Schema map[string]any
}

// Cost is what a successful run spends, in AI and data credits.
type Cost struct{ AI, Data int64 }

// Handler does an action's work for one run. It reads its validated input
// and the client from x, calls providers through x.P, and returns the
// record to answer with and the rows to write. A *provider.Error ends the
// run with status "error"; so does any other error (status_code 500).
type Handler func(ctx context.Context, x *Exec) (Result, error)

// Action is one action of the catalog, declared once.
type Action struct {
	Name        string
	Description string
	Fields      []Field
	Cost        Cost
	// Writes is the dataset its record goes to (a GET /api/v1/data
	// resource); some actions also write others (see docs/actions.md).
	Writes string
	// Refreshes marks actions that update the same records when re-run
	// (seo_audit, fetch_backlinks) instead of adding new ones.
	Refreshes bool
	// TypicalSeconds is how long a run usually takes with the production
	// providers (a language model, DataForSEO, a real site), which
	// discovery says until this deployment has measured its own runs.
	TypicalSeconds float64
	// Example is the action's own fields of a valid request (action and
	// client_id are added by whoever shows it): the OpenAPI document's
	// example, checked by the catalog's tests against validation and the
	// input schema.
	Example map[string]any
	Run     Handler
}

// Field returns the action's field called name.
func (a *Action) Field(name string) (Field, bool) {
	i := slices.IndexFunc(a.Fields, func(f Field) bool { return f.Name == name })
	if i < 0 {
		return Field{}, false
	}
	return a.Fields[i], true
}

// FieldNames lists the action's field names in declaration order.
func (a *Action) FieldNames() []string {
	out := make([]string, len(a.Fields))
	for i, f := range a.Fields {
		out[i] = f.Name
	}
	return out
}
