package catalog

import (
	"github.com/atrium-hq/atrium/platform/value"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

// JSONSchemaDialect is the JSON Schema version InputSchema speaks.
const JSONSchemaDialect = "https://json-schema.org/draft/2020-12/schema"

// oneLinePattern is value.OneLine as a JSON Schema pattern: no control
// characters, tab included; \x escapes, which ECMA-262 (the dialect of
// JSON Schema patterns) and RE2 both read.
const oneLinePattern = `^[^\x00-\x1F\x7F]*$`

// InputSchema is the JSON Schema (2020-12) of a request body for a: action
// (a constant), client_id and the action's own fields, each with the type,
// format, bounds, allowed values and default that ParseRequest checks, read
// from the same declaration. Discovery (GET /api/v1/actions), the OpenAPI
// document and the MCP tools publish it, so that a form, an SDK or an agent
// can build a request that validation accepts without reading prose.
//
// What a schema cannot say, ParseRequest still checks: that a URL the
// service fetches is on a public address, that a location is one the SEO
// data provider knows, that the client is linked to the caller's agency.
// Blank strings are refused (a required field that is blank is missing);
// minLength 1 says the nearest a schema can.
func InputSchema(a *action.Action) map[string]any {
	props := map[string]any{
		"action":    map[string]any{"const": a.Name, "description": "The action to run."},
		"client_id": map[string]any{"type": "string", "format": "uuid", "description": "The client to run it for: " + clientExpected + "."},
	}
	required := []any{"action", "client_id"}
	for _, f := range a.Fields {
		props[f.Name] = fieldSchema(f)
		if f.Required {
			required = append(required, f.Name)
		}
	}
	return map[string]any{
		"$schema":              JSONSchemaDialect,
		"title":                a.Name,
		"description":          a.Description,
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	}
}

// fieldSchema is one field's schema; an array's items follow the field's
// rule as ParseRequest checks each.
func fieldSchema(f action.Field) map[string]any {
	s := map[string]any{}
	if f.Schema != nil {
		for k, v := range f.Schema {
			s[k] = v
		}
	} else if f.Type == action.TArray {
		s["type"] = "array"
		s["items"] = valueSchema(f)
		if f.MaxItems > 0 {
			s["maxItems"] = f.MaxItems
		}
	} else {
		s = valueSchema(f)
	}
	s["description"] = f.Description
	if f.Default != nil {
		s["default"] = f.Default
	}
	return s
}

// valueSchema is the schema of one value by the field's rule (rule in
// validate.go, the one validation applies).
func valueSchema(f action.Field) map[string]any {
	if len(f.Enum) > 0 {
		enum := make([]any, len(f.Enum))
		for i, e := range f.Enum {
			enum[i] = e
		}
		return map[string]any{"type": "string", "enum": enum}
	}
	r := rule(f)
	s := map[string]any{}
	switch r.Kind {
	case value.Integer, value.Number:
		s["type"] = "number"
		if r.Kind == value.Integer {
			s["type"] = "integer"
		}
		if r.AtLeast != nil {
			s["minimum"] = *r.AtLeast
		}
		if r.AtMost != nil {
			s["maximum"] = *r.AtMost
		}
		return s
	case value.Boolean:
		s["type"] = "boolean"
		return s
	case value.UUID:
		s["type"], s["format"] = "string", "uuid"
		return s
	case value.URL:
		s["type"], s["format"], s["pattern"] = "string", "uri", "^[Hh][Tt][Tt][Pp][Ss]?://"
	case value.Email:
		s["type"], s["format"] = "string", "email"
	default:
		s["type"] = "string"
		if f.Format == action.FormatHTML {
			s["contentMediaType"] = "text/html"
		}
		if r.Lines == value.OneLine {
			s["pattern"] = oneLinePattern
		}
	}
	s["minLength"] = 1
	switch {
	case r.Max > 0:
		s["maxLength"] = r.Max
	case r.Kind == value.URL:
		s["maxLength"] = value.MaxURL
	case r.Kind == value.Email:
		s["maxLength"] = value.MaxEmail
	}
	return s
}
