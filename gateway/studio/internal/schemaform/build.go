package schemaform

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Form is an action's input as the console shows it: a field per
// property, in the order a person fills them (the required ones first).
// A const property (the action's own name) has no field: Parse fills it
// in.
type Form struct {
	// Title and Description are the schema's own.
	Title, Description string
	Fields             []Field
	// Error is an error of the form as a whole (errs[""] of Parse).
	Error string
}

// Field is one control with everything a template needs to render it
// accessibly: a label for its ID, its help, hint and error by ID for
// aria-describedby, its bounds as HTML attributes.
type Field struct {
	// Name is the property's name: the control's name attribute and the
	// key of the input and of the errors.
	Name string
	// ID is the control's id, unique in the form: "sf-" and the name.
	ID    string
	Label string
	// Help is the property's description; Hint says what it allows ("A
	// whole number from 1 to 3."). Either may be empty.
	Help, Hint string
	// Kind is one of the Kind constants; InputType is the type attribute
	// of an input (text, url, email, number).
	Kind, InputType string
	Required        bool
	// Value is the control's text: a textarea's content, an input's value.
	Value string
	// Checked is a checkbox's state.
	Checked bool
	// Options are a select's choices, or a checkbox group's.
	Options []Option
	// Min, Max and Step are a number input's attributes; MinLength and
	// MaxLength a text control's. Empty means none.
	Min, Max, Step       string
	MinLength, MaxLength string
	// Rows is a textarea's height in lines.
	Rows int
	// Error is what is wrong with the value last posted, or "".
	Error string
	// Fallback says why a KindJSON field is not a control of its own.
	Fallback string
}

// Option is one choice of a select or a checkbox group.
type Option struct {
	// ID is a checkbox's id in a group (each needs a label of its own).
	ID       string
	Value    string
	Label    string
	Selected bool
}

// HelpID, HintID and ErrorID are the ids of the elements that describe
// the control; DescribedBy lists those that are shown, for
// aria-describedby.
func (f Field) HelpID() string  { return f.ID + "-help" }
func (f Field) HintID() string  { return f.ID + "-hint" }
func (f Field) ErrorID() string { return f.ID + "-error" }
func (f Field) DescribedBy() string {
	var ids []string
	if f.Error != "" {
		ids = append(ids, f.ErrorID())
	}
	if f.Help != "" {
		ids = append(ids, f.HelpID())
	}
	if f.Hint != "" {
		ids = append(ids, f.HintID())
	}
	return strings.Join(ids, " ")
}

// Without returns the form less the named fields: those the console fills
// itself (client_id, chosen from the client being viewed), whose values
// it then adds to the posted form before Parse.
func (f Form) Without(names ...string) Form {
	out := f
	out.Fields = nil
	for _, fd := range f.Fields {
		drop := false
		for _, n := range names {
			drop = drop || fd.Name == n
		}
		if !drop {
			out.Fields = append(out.Fields, fd)
		}
	}
	return out
}

// Raw is a value as it was typed, which Build shows as it is (Posted
// reads a posted form into Raw values). Any other value is input (JSON as
// the action takes it, such as a previous run's) and Build writes it as
// its control shows it: a list one item per line, a number as digits.
type Raw string

// Posted reads a posted form into the values Build shows again after
// Parse refused it, as they were typed. A key posted more than once (a
// checkbox group) is a []Raw.
func Posted(form map[string][]string) map[string]any {
	out := make(map[string]any, len(form))
	for k, vs := range form {
		switch len(vs) {
		case 0:
		case 1:
			out[k] = Raw(vs[0])
		default:
			raws := make([]Raw, len(vs))
			for i, v := range vs {
				raws[i] = Raw(v)
			}
			out[k] = raws
		}
	}
	return out
}

// Build reads schema (an action's input_schema, JSON) into a Form. values
// are what to show in the controls: nil for a new form (each property's
// default), a previous input, or Posted(form) after Parse refused it (a
// checkbox then shows as posted: absent is unticked). errs are Parse's
// errors, each shown by its field.
//
// Build fails only when schema is not an object schema; a property it
// cannot show as a control is a JSON textarea.
func Build(schema []byte, values map[string]any, errs map[string]string) (Form, error) {
	s, err := readSchema(schema)
	if err != nil {
		return Form{}, err
	}
	posted := false
	for _, v := range values {
		switch v.(type) {
		case Raw, []Raw:
			posted = true
		}
	}
	form := Form{Title: s.title, Description: s.description, Error: errs[""]}
	ids := map[string]bool{}
	for _, p := range s.props {
		if p.isConst {
			continue
		}
		v, given := values[p.name]
		if !given && !posted && p.hasDefault {
			v = p.def
		}
		f := Field{Name: p.name, ID: uniqueID(ids, p.name), Label: label(p), Help: strings.TrimSpace(p.description),
			Hint: hint(p), Kind: p.kind, Required: p.required, Error: errs[p.name], Fallback: p.fallback}
		switch p.kind {
		case KindText, KindURL, KindEmail:
			f.InputType = map[string]string{KindText: "text", KindURL: "url", KindEmail: "email"}[p.kind]
			f.Value = text(v)
			f.MinLength, f.MaxLength = lengths(p)
		case KindTextarea:
			f.Value = text(v)
			f.MinLength, f.MaxLength = lengths(p)
			f.Rows = 8
		case KindNumber, KindInteger:
			f.InputType = "number"
			f.Value = text(v)
			f.Min, f.Max, f.Step = numberAttrs(p)
		case KindCheckbox:
			f.Checked = checked(v)
		case KindSelect:
			f.Options = selectOptions(p, text(v))
		case KindChoices:
			f.Options = choiceOptions(p, f.ID, v)
		case KindList:
			f.Value = lines(v)
			f.Rows = 6
		case KindJSON:
			f.Value = jsonText(v)
			f.Rows = 6
		}
		// A posted textarea's CRLF line breaks shown as LF (the page is
		// the same to a browser, and plainer to read).
		f.Value = strings.ReplaceAll(f.Value, "\r\n", "\n")
		form.Fields = append(form.Fields, f)
	}
	return form, nil
}

// uniqueID is "sf-" and the name in the characters an id and a CSS
// selector take plainly; a name that comes out the same as another's
// gets a number.
func uniqueID(seen map[string]bool, name string) string {
	var b strings.Builder
	b.WriteString("sf-")
	for _, r := range name {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	id := b.String()
	for i := 2; seen[id]; i++ {
		id = b.String() + "-" + strconv.Itoa(i)
	}
	seen[id] = true
	return id
}

func lengths(p *prop) (string, string) {
	var lo, hi string
	if p.minLength != nil && *p.minLength > 1 {
		lo = strconv.Itoa(*p.minLength)
	}
	if p.maxLength != nil {
		hi = strconv.Itoa(*p.maxLength)
	}
	return lo, hi
}

func numberAttrs(p *prop) (lo, hi, step string) {
	if p.minimum != nil {
		lo = num(*p.minimum)
	}
	if p.maximum != nil {
		hi = num(*p.maximum)
	}
	switch {
	case p.multipleOf != nil:
		step = num(*p.multipleOf)
	case p.kind == KindInteger:
		step = "1"
	default:
		// Without it a browser refuses 30.2672 (the default step is 1).
		step = "any"
	}
	return lo, hi, step
}

// text is a value as a one-value control shows it.
func text(v any) string {
	switch x := v.(type) {
	case Raw:
		return string(x)
	case []Raw:
		if len(x) > 0 {
			return string(x[0])
		}
		return ""
	case string, float64, bool, nil:
		return scalar(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case json.Number:
		return x.String()
	}
	return jsonText(v)
}

func checked(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case Raw, []Raw:
		return ticked(text(x))
	}
	return false
}

// ticked says whether a checkbox's posted value means ticked: a ticked
// checkbox posts "true" (its value); "on" is what one without a value
// posts.
func ticked(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "on", "1", "yes":
		return true
	}
	return false
}

// selectOptions are a select's choices, current selected. An empty choice
// comes first when none of the values is current (a required field must
// be chosen on purpose: a browser would otherwise post the first value as
// if it had been chosen), and for an optional field without a default,
// which may be left out; one with a default is that default when left
// out, so choosing it says it.
func selectOptions(p *prop, current string) []Option {
	var out []Option
	chosen := false
	for _, e := range p.enum {
		chosen = chosen || scalar(e) == current
	}
	if !p.required && !p.hasDefault || !chosen {
		lbl := "(none)"
		if p.required {
			lbl = "Choose one…"
		}
		out = append(out, Option{Value: "", Label: lbl, Selected: current == ""})
	}
	for _, e := range p.enum {
		s := scalar(e)
		out = append(out, Option{Value: s, Label: s, Selected: s == current})
	}
	return out
}

func choiceOptions(p *prop, id string, v any) []Option {
	chosen := map[string]bool{}
	switch x := v.(type) {
	case []Raw:
		for _, r := range x {
			chosen[string(r)] = true
		}
	case []any:
		for _, it := range x {
			chosen[scalar(it)] = true
		}
	case []string:
		for _, s := range x {
			chosen[s] = true
		}
	case nil:
	default:
		chosen[text(x)] = true
	}
	out := make([]Option, len(p.enum))
	for i, e := range p.enum {
		s := scalar(e)
		out[i] = Option{ID: id + "-" + strconv.Itoa(i+1), Value: s, Label: s, Selected: chosen[s]}
	}
	return out
}

// lines is a list one item per line.
func lines(v any) string {
	switch x := v.(type) {
	case []any:
		out := make([]string, len(x))
		for i, it := range x {
			out[i] = text(it)
		}
		return strings.Join(out, "\n")
	case []string:
		return strings.Join(x, "\n")
	case []Raw:
		out := make([]string, len(x))
		for i, it := range x {
			out[i] = string(it)
		}
		return strings.Join(out, "\n")
	}
	return text(v)
}

// jsonText is a value written as JSON for a JSON textarea; a Raw value is
// what was typed.
func jsonText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case Raw, []Raw:
		return text(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return ""
		}
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
