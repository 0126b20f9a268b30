package studio

import (
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/gateway/studio/internal/richtext"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
)

// The item editor's form: what a collection's fields look like as HTML
// controls, and the posted form read back into the item's data. The
// service validates again (types, lengths, options, references); this
// side only turns what a browser can post (strings) into the JSON types
// the fields take, with a message naming the field when it cannot.

// fieldPrefix names the item's fields in the form ("f.title"), so that
// they never collide with the form's own inputs (csrf_token, etag, the
// schedule).
const fieldPrefix = "f."

// datetimeLocal is the value format of <input type="datetime-local"> with
// seconds (step=1); the Studio states that the times are UTC.
const datetimeLocal = "2006-01-02T15:04:05"

// fieldControl is one field of the item editor as its template draws it.
type fieldControl struct {
	Key, Type, Label string
	// Name is the form field's name, ID the control's id.
	Name, ID string
	Required bool
	// MaxLength is the most characters (0: no bound).
	MaxLength int32
	// Value is the control's text; Values the ticked values of a
	// multi_select; Checked a boolean's.
	Value   string
	Values  []string
	Checked bool
	// Options are a select's, multi_select's or reference's choices.
	Options []choice
	// Assets are an asset field's choices.
	Assets []assetChoice
	// Target is a reference's collection; More that it has more items than
	// the select lists (a search box finds the others).
	Target string
	More   bool
	// Preview is a rich_text value as the site would show it.
	Preview template.HTML
	// Error is what is wrong with the posted value.
	Error string
	// AssetsURL is the site's asset library (where uploads go), ChoicesURL
	// a reference's search; Writable that the person may change the item.
	AssetsURL, ChoicesURL string
	Writable              bool
}

// choice is an option of a select, a checkbox of a group.
type choice struct {
	Value, Label string
	Selected     bool
}

// assetChoice is an asset of the picker, with its thumbnail.
type assetChoice struct {
	ID, Label, Thumb string
	Selected         bool
}

// HelpID, ErrorID and DescribedBy tie a control to its texts.
func (f fieldControl) ErrorID() string { return f.ID + "-error" }
func (f fieldControl) HelpID() string  { return f.ID + "-help" }

// keyLabel is the label a field key reads as: "publish_on" is "Publish
// on".
func keyLabel(key string) string {
	s := strings.ReplaceAll(key, "_", " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// controls are the collection's fields as controls, holding the values of
// form (an item as formValues made it, or what was posted) and errs.
func controls(fields []*collectionsv1.FieldDefinition, form url.Values, errs map[string]string) []fieldControl {
	out := make([]fieldControl, 0, len(fields))
	for _, f := range fields {
		name := fieldPrefix + f.GetKey()
		c := fieldControl{Key: f.GetKey(), Type: f.GetType(), Label: keyLabel(f.GetKey()), Name: name,
			ID: "f-" + f.GetKey(), Required: f.GetRequired(), MaxLength: f.GetMaxLength(),
			Value: form.Get(name), Values: form[name], Target: f.GetTarget(), Error: errs[f.GetKey()]}
		switch f.GetType() {
		case "boolean":
			c.Checked = form.Get(name) != ""
		case "select", "multi_select":
			for _, o := range f.GetOptions() {
				c.Options = append(c.Options, choice{Value: o, Label: o, Selected: slices.Contains(c.Values, o)})
			}
		case "rich_text":
			if c.Value != "" {
				c.Preview = richtext.Preview(c.Value)
			}
		}
		out = append(out, c)
	}
	return out
}

// formValues is an item's data as the editor's form posts it.
func formValues(fields []*collectionsv1.FieldDefinition, item map[string]any) url.Values {
	form := url.Values{}
	for _, f := range fields {
		v, ok := item[f.GetKey()]
		if !ok || v == nil {
			continue
		}
		name := fieldPrefix + f.GetKey()
		switch f.GetType() {
		case "boolean":
			if b, _ := v.(bool); b {
				form.Set(name, "on")
			}
		case "multi_select":
			if list, ok := v.([]any); ok {
				for _, x := range list {
					form.Add(name, fmt.Sprint(x))
				}
			}
		case "number", "integer":
			if n, ok := v.(float64); ok {
				form.Set(name, strconv.FormatFloat(n, 'f', -1, 64))
			}
		case "datetime":
			form.Set(name, localTime(fmt.Sprint(v)))
		case "json":
			b, err := json.MarshalIndent(v, "", "  ")
			if err == nil {
				form.Set(name, string(b))
			}
		default:
			if s, ok := v.(string); ok {
				form.Set(name, s)
			} else if id, ok := idOf(v); ok {
				// An expanded reference or asset: its id.
				form.Set(name, id)
			}
		}
	}
	return form
}

// idOf is the id of an expanded object.
func idOf(v any) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	id, ok := m["id"].(string)
	return id, ok
}

// localTime is an RFC 3339 time as a datetime-local value in UTC; the
// text itself when it is not one.
func localTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format(datetimeLocal)
}

// parseLocalTime reads a datetime-local value (UTC, with or without
// seconds) or an RFC 3339 time.
func parseLocalTime(s string) (time.Time, error) {
	for _, layout := range []string{datetimeLocal, "2006-01-02T15:04", time.RFC3339Nano} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date and time: give it as 2026-12-01T09:30 (UTC)", s)
}

// parseFields reads the item's data from a posted form. Every field of the
// collection is in the answer: an empty optional field is null (cleared),
// so that a save writes what the form shows. With creating, empty fields
// are left out instead. errs names, by field key, what could not be read.
func parseFields(fields []*collectionsv1.FieldDefinition, form url.Values, creating bool) (data map[string]any, errs map[string]string) {
	data, errs = map[string]any{}, map[string]string{}
	for _, f := range fields {
		key, name := f.GetKey(), fieldPrefix+f.GetKey()
		raw := strings.TrimSpace(form.Get(name))
		if f.GetType() == "text" || f.GetType() == "rich_text" {
			// Text keeps its spaces; only an all-blank value is empty.
			if raw != "" {
				raw = form.Get(name)
			}
		}
		empty := raw == ""
		switch f.GetType() {
		case "boolean":
			data[key] = raw != ""
			continue
		case "multi_select":
			list := []any{}
			for _, v := range form[name] {
				if !slices.Contains(f.GetOptions(), v) {
					errs[key] = fmt.Sprintf("%q is not one of the options (%s)", v, strings.Join(f.GetOptions(), ", "))
					break
				}
				list = append(list, v)
			}
			if len(list) == 0 && creating {
				continue
			}
			data[key] = list
			continue
		}
		if empty {
			if f.GetRequired() {
				errs[key] = keyLabel(key) + " is required"
			} else if !creating {
				data[key] = nil
			}
			continue
		}
		v, err := fieldValue(f, raw)
		if err != nil {
			errs[key] = err.Error()
			continue
		}
		data[key] = v
	}
	return data, errs
}

// fieldValue reads one non-empty posted value as field f's type.
func fieldValue(f *collectionsv1.FieldDefinition, raw string) (any, error) {
	switch f.GetType() {
	case "number":
		n, err := strconv.ParseFloat(raw, 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, fmt.Errorf("%q is not a number: give digits, with a dot for decimals (4.5)", raw)
		}
		return n, nil
	case "integer":
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number: give digits only (12)", raw)
		}
		// JSON numbers travel as doubles: beyond 2^53 they lose digits.
		if n > 1<<53 || n < -(1<<53) {
			return nil, fmt.Errorf("%s is too large: whole numbers go up to 9007199254740992", raw)
		}
		return float64(n), nil
	case "date":
		if _, err := time.Parse(time.DateOnly, raw); err != nil {
			return nil, fmt.Errorf("%q is not a date: give it as 2026-12-01", raw)
		}
		return raw, nil
	case "datetime":
		t, err := parseLocalTime(raw)
		if err != nil {
			return nil, err
		}
		return t.Format(time.RFC3339), nil
	case "select":
		if !slices.Contains(f.GetOptions(), raw) {
			return nil, fmt.Errorf("%q is not one of the options (%s)", raw, strings.Join(f.GetOptions(), ", "))
		}
		return raw, nil
	case "json":
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			return nil, fmt.Errorf("this is not JSON (%w): write an object like {\"a\": 1}, a list, a number or a quoted string", err)
		}
		return v, nil
	}
	return raw, nil
}

// schedule reads the form's publish_at or unpublish_at input against the
// item's current value: "" and false when unchanged (the request leaves it
// as it is); nil to cancel a pending one; otherwise the RFC 3339 time.
func schedule(posted, current string) (any, bool, error) {
	posted = strings.TrimSpace(posted)
	if posted == localTime(current) || (posted == "" && current == "") {
		return nil, false, nil
	}
	if posted == "" {
		return nil, true, nil
	}
	t, err := parseLocalTime(posted)
	if err != nil {
		return nil, false, err
	}
	return t.Format(time.RFC3339), true, nil
}

// titleField is the field that names an item in lists: a text field
// called title, name, headline or label, else the first text field; ""
// when there is none (the id names it).
func titleField(fields []*collectionsv1.FieldDefinition) string {
	for _, want := range []string{"title", "name", "headline", "label"} {
		for _, f := range fields {
			if f.GetKey() == want && f.GetType() == "text" {
				return want
			}
		}
	}
	for _, f := range fields {
		if f.GetType() == "text" {
			return f.GetKey()
		}
	}
	return ""
}

// itemTitle is what an item is called in lists and pickers.
func itemTitle(item map[string]any, field string) string {
	if s, ok := item[field].(string); ok && strings.TrimSpace(s) != "" {
		return s
	}
	id, _ := item["id"].(string)
	return "Untitled (" + id + ")"
}
