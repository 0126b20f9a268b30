package catalog

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/netguard"
	"github.com/atrium-hq/atrium/platform/value"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// Request is a parsed action request: the action, its client and its
// validated fields.
type Request struct {
	Action   *action.Action
	ClientID string
	Input    action.Input
}

// bodyFields are the request fields every action takes.
var bodyFields = []string{"action", "client_id"}

// clientExpected says what client_id accepts. Whether the client is linked
// to the caller's agency is asked of the CRM after the body is checked.
const clientExpected = "the id (a UUID) of a client linked to your agency"

// ParseRequest checks a request body in the order a caller fixes it: the
// action, the client, then the action's fields. What each field declares
// is checked by the platform's rule for it (platform/value), "required"
// included; a URL the service fetches is also checked by guard, the
// outbound address rule (platform/netguard) the fetch itself applies, so
// that an address the fetch would refuse is a 400 before anything is
// reserved.
func ParseRequest(body map[string]any, guard *netguard.Guard) (Request, error) {
	names := list(Names())
	if len(body) == 0 {
		return Request{}, apperr.Invalid("the request body must be a JSON object with action, client_id and the action's fields; actions: %s", names)
	}
	actionExpected := "the name of an action, one of: " + names
	raw := body["action"]
	if value.Missing(raw) {
		return Request{}, value.Required("action", actionExpected)
	}
	name, _ := raw.(string)
	a, ok := Lookup(name)
	if !ok {
		return Request{}, value.Invalid("action", actionExpected, raw)
	}
	raw = body["client_id"]
	if value.Missing(raw) {
		return Request{}, value.Required("client_id", clientExpected)
	}
	clientID, ok := raw.(string)
	if !ok {
		return Request{}, value.Invalid("client_id", clientExpected, raw)
	}
	for k := range body {
		if slices.Contains(bodyFields, k) {
			continue
		}
		if _, ok := a.Field(k); !ok {
			if len(a.Fields) == 0 {
				return Request{}, apperr.Invalid("%s is not a field of %s, which takes no fields besides action and client_id", k, a.Name)
			}
			return Request{}, apperr.Invalid("%s is not a field of %s; its fields are: %s", k, a.Name, list(a.FieldNames()))
		}
	}
	in := action.Input{}
	for _, f := range a.Fields {
		name := a.Name + "." + f.Name
		v := body[f.Name]
		// A missing value (absent, null, blank) of an optional field is an
		// absent one: many clients send empty form fields.
		if value.Missing(v) {
			if f.Required {
				return Request{}, value.Required(name, expected(f))
			}
			if f.Default != nil {
				in[f.Name] = f.Default
			}
			continue
		}
		val, err := checkField(name, f, v, guard)
		if err != nil {
			return Request{}, err
		}
		in[f.Name] = val
	}
	return Request{Action: a, ClientID: clientID, Input: in}, nil
}

// rule is the platform's rule for a value of the field (for an array, for
// each of its items): the kind its type and format name, with the bounds
// it declares.
func rule(f action.Field) value.Rule {
	switch f.Type {
	case action.TInteger:
		return value.Rule{Kind: value.Integer, AtLeast: f.Min, AtMost: f.Max}
	case action.TNumber:
		return value.Rule{Kind: value.Number, AtLeast: f.Min, AtMost: f.Max}
	case action.TBoolean:
		return value.Rule{Kind: value.Boolean}
	}
	switch f.Format {
	case action.FormatURL:
		return value.Rule{Kind: value.URL, Max: f.MaxLength}
	case action.FormatEmail:
		return value.Rule{Kind: value.Email, Max: f.MaxLength}
	case action.FormatUUID:
		return value.Rule{Kind: value.UUID}
	}
	if f.Multiline {
		return value.Rule{Kind: value.String, Max: f.MaxLength, Lines: value.AnyText}
	}
	return value.Rule{Kind: value.String, Max: f.MaxLength, Lines: value.OneLine}
}

// expected says in words what the field accepts: its rule's description,
// or its allowed values, or what an array holds.
func expected(f action.Field) string {
	switch {
	case f.Type == action.TArray && len(f.Enum) > 0:
		return "an array of at most " + strconv.Itoa(f.MaxItems) + " items, each one of: " + list(f.Enum)
	case len(f.Enum) > 0:
		return "one of: " + list(f.Enum)
	case f.Type == action.TArray && f.MaxItems > 0:
		return "an array of at most " + strconv.Itoa(f.MaxItems) + " items, each " + rule(f).Expected()
	case f.Type == action.TArray:
		return "an array of items, each " + rule(f).Expected()
	}
	return rule(f).Expected()
}

// checkField checks a field's value that is not missing and returns it in
// its Input form: a string, a float64 for a number, a bool, a []string for
// an array; a UUID in its canonical lower case.
func checkField(name string, f action.Field, v any, guard *netguard.Guard) (any, error) {
	switch {
	case f.Check != nil:
		return f.Check(name, v)
	case f.Type == action.TArray:
		return checkArray(name, f, v, guard)
	case len(f.Enum) > 0:
		if s, ok := v.(string); ok && slices.Contains(f.Enum, s) {
			return s, nil
		}
		return nil, value.Invalid(name, expected(f), v)
	}
	val, err := checkValue(name, f, v, guard)
	if err != nil {
		return nil, err
	}
	switch val.Kind {
	case value.Integer, value.Number:
		return val.Num, nil
	case value.Boolean:
		return val.Bool, nil
	}
	return val.Str, nil
}

// checkArray checks an array of strings, each by the field's rule; an
// item cannot be missing.
func checkArray(name string, f action.Field, v any, guard *netguard.Guard) ([]string, error) {
	items, ok := v.([]any)
	if !ok {
		return nil, value.Invalid(name, expected(f), v)
	}
	if f.MaxItems > 0 && len(items) > f.MaxItems {
		return nil, apperr.Invalid("%s must be %s; got %d items", name, expected(f), len(items))
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		itemName := name + "[" + strconv.Itoa(i) + "]"
		if value.Missing(it) {
			return nil, rule(f).Required(itemName)
		}
		if len(f.Enum) > 0 {
			if s, ok := it.(string); ok && slices.Contains(f.Enum, s) {
				if slices.Contains(out, s) {
					return nil, apperr.Invalid("%s must be %s, each once; %q is named twice", name, expected(f), s)
				}
				out = append(out, s)
				continue
			}
			return nil, value.Invalid(itemName, "one of: "+list(f.Enum), it)
		}
		val, err := checkValue(itemName, f, it, guard)
		if err != nil {
			return nil, err
		}
		out = append(out, val.Str)
	}
	return out, nil
}

// checkValue checks one value by the field's rule; a URL the service
// fetches by guard first, whose 400 says why the address is refused.
func checkValue(name string, f action.Field, v any, guard *netguard.Guard) (value.Value, error) {
	if s, ok := v.(string); ok && f.Fetched {
		if err := guard.Field(name, s); err != nil {
			return value.Value{}, err
		}
	}
	r := rule(f)
	val, ok := r.Check(v)
	if !ok {
		return value.Value{}, r.Invalid(name, v)
	}
	return val, nil
}

// CheckKnown asks the providers about the request's fields that declare
// Known, such as generate_keywords.location, which the SEO data provider
// must have figures for. It is the last check of a request, after
// ParseRequest and before anything is reserved, so that a value the
// provider refuses is a 400 naming the field that costs nothing:
// "generate_keywords.location must be a country DataForSEO Labs has keyword
// data for: ...; got "Atlantis"". A provider that cannot tell now (it is
// unreachable) lets the request through: the run asks it again, and a
// failed run is not charged.
func CheckKnown(ctx context.Context, req Request, p *action.Providers) error {
	for _, f := range req.Action.Fields {
		v, ok := req.Input[f.Name]
		if f.Known == nil || !ok {
			continue
		}
		err := f.Known(ctx, p, v)
		var pe *provider.Error
		switch {
		case err == nil:
		case errors.As(err, &pe) && pe.StatusCode == http.StatusBadRequest:
			return value.Invalid(req.Action.Name+"."+f.Name, pe.Message, v)
		case ctx.Err() != nil:
			return ctx.Err()
		}
	}
	return nil
}
