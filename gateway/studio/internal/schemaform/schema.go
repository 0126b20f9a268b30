package schemaform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
)

// The kinds of control a Field is rendered as.
const (
	KindText     = "text"     // one line of text
	KindURL      = "url"      // a web address (format uri)
	KindEmail    = "email"    // one email address (format email)
	KindTextarea = "textarea" // free text over several lines
	KindNumber   = "number"   // a number
	KindInteger  = "integer"  // a whole number
	KindCheckbox = "checkbox" // a boolean: ticked is true
	KindSelect   = "select"   // one of an enum
	KindList     = "textarea-list"
	// KindChoices is an array of an enum: a checkbox per allowed value,
	// grouped in a fieldset.
	KindChoices = "checkbox-group"
	// KindJSON is the fallback of a property the form cannot show as a
	// control: its value is written as JSON.
	KindJSON = "json"
)

// multilineAbove is the maxLength from which a string without a pattern
// is free text in a textarea rather than a line: the catalog's one-line
// fields declare a pattern, and its longest plain one is 255 characters.
const multilineAbove = 255

// prop is one property of the schema as the form reads and checks it.
type prop struct {
	name        string
	required    bool
	title       string
	description string
	kind        string
	// fallback says why a property is a JSON textarea.
	fallback string

	typ        string // string, integer, number or boolean; of the items for a list
	format     string
	pattern    *regexp.Regexp
	minLength  *int
	maxLength  *int
	minimum    *float64
	maximum    *float64
	exclMin    *float64
	exclMax    *float64
	multipleOf *float64
	enum       []any
	hasDefault bool
	def        any
	isConst    bool
	constVal   any

	// item is the schema of a list's items; minItems, maxItems and unique
	// bound the list.
	item     *prop
	minItems *int
	maxItems *int
	unique   bool
}

// schema is the object schema of a request body.
type schema struct {
	title       string
	description string
	props       []*prop
}

// annotations are keywords that say nothing the form must check.
var annotations = []string{"$schema", "$id", "$comment", "title", "description", "default", "examples",
	"deprecated", "readOnly", "writeOnly", "contentMediaType", "contentEncoding"}

// supported are the keywords the form understands on a property; any
// other makes it a JSON textarea.
var supported = append([]string{"type", "enum", "const", "format", "pattern", "minLength", "maxLength",
	"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
	"items", "minItems", "maxItems", "uniqueItems"}, annotations...)

// readSchema reads an object schema: its properties in the order a form
// shows them, the required ones first in the order required lists them,
// then the others in the document's order.
func readSchema(raw []byte) (*schema, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return nil, errors.New("the input schema is not a JSON object")
	}
	s := &schema{}
	_ = json.Unmarshal(top["title"], &s.title)
	_ = json.Unmarshal(top["description"], &s.description)
	if t, ok := top["type"]; ok {
		var typ string
		if json.Unmarshal(t, &typ) != nil || typ != "object" {
			return nil, fmt.Errorf("the input schema describes %s, not an object of fields", t)
		}
	}
	var required []string
	if r, ok := top["required"]; ok {
		if err := json.Unmarshal(r, &required); err != nil {
			return nil, errors.New("the input schema's required is not a list of property names")
		}
	}
	names, raws, err := orderedObject(top["properties"])
	if err != nil {
		return nil, fmt.Errorf("the input schema's properties: %w", err)
	}
	index := make(map[string]int, len(names))
	for i, n := range names {
		index[n] = i
	}
	isRequired := make(map[string]bool, len(required))
	order := make([]int, 0, len(names))
	placed := make(map[int]bool, len(names))
	for _, r := range required {
		isRequired[r] = true
		if i, ok := index[r]; ok && !placed[i] {
			order, placed[i] = append(order, i), true
		}
	}
	for i := range names {
		if !placed[i] {
			order = append(order, i)
		}
	}
	for _, i := range order {
		p := readProp(raws[i])
		p.name = names[i]
		p.required = isRequired[names[i]]
		s.props = append(s.props, p)
	}
	return s, nil
}

// orderedObject reads a JSON object's members in the document's order (a
// map would lose it). Absent or null is no members; a repeated name keeps
// its first value.
func orderedObject(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, errors.New("not a JSON object")
	}
	var names []string
	var raws []json.RawMessage
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		names = append(names, name)
		raws = append(raws, v)
	}
	return names, raws, nil
}

// readProp reads one property; what it cannot read as a control it reads
// as a JSON textarea, saying why.
func readProp(raw json.RawMessage) *prop {
	p := &prop{}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		// true, false or not an object: nothing to show but JSON.
		p.kind, p.fallback = KindJSON, "its schema is not an object"
		return p
	}
	_ = json.Unmarshal(m["title"], &p.title)
	_ = json.Unmarshal(m["description"], &p.description)
	if d, ok := m["default"]; ok && json.Unmarshal(d, &p.def) == nil {
		p.hasDefault = true
	}
	if why := p.read(m, true); why != "" {
		p.kind, p.fallback = KindJSON, why
		p.item, p.enum = nil, nil
	}
	return p
}

// read fills p from the keywords of a schema; topLevel allows an array
// (a list is not a list of lists). It returns why the schema cannot be a
// control, or "".
func (p *prop) read(m map[string]json.RawMessage, topLevel bool) string {
	for k := range m {
		if !slices.Contains(supported, k) {
			return "the form cannot show " + k
		}
	}
	if c, ok := m["const"]; ok {
		if json.Unmarshal(c, &p.constVal) != nil {
			return "its const is not JSON"
		}
		p.isConst = true
		return ""
	}
	if t, ok := m["type"]; ok {
		if json.Unmarshal(t, &p.typ) != nil {
			return "its type is not one name"
		}
	}
	if e, ok := m["enum"]; ok {
		if json.Unmarshal(e, &p.enum) != nil || len(p.enum) == 0 {
			return "its enum is not a list of values"
		}
		if p.typ == "" {
			p.typ = enumType(p.enum)
		}
		for _, v := range p.enum {
			if !scalarOf(p.typ, v) {
				return "its enum holds values of another type than " + p.typ
			}
		}
	}
	ints := []struct {
		key string
		dst **int
	}{{"minLength", &p.minLength}, {"maxLength", &p.maxLength}, {"minItems", &p.minItems}, {"maxItems", &p.maxItems}}
	for _, f := range ints {
		if v, ok := m[f.key]; ok {
			n, ok := count(v)
			if !ok {
				return f.key + " is not a count"
			}
			*f.dst = &n
		}
	}
	nums := []struct {
		key string
		dst **float64
	}{{"minimum", &p.minimum}, {"maximum", &p.maximum}, {"exclusiveMinimum", &p.exclMin}, {"exclusiveMaximum", &p.exclMax}, {"multipleOf", &p.multipleOf}}
	for _, f := range nums {
		if v, ok := m[f.key]; ok {
			var x float64
			if json.Unmarshal(v, &x) != nil {
				return f.key + " is not a number"
			}
			*f.dst = &x
		}
	}
	if p.multipleOf != nil && !(*p.multipleOf > 0) {
		return "multipleOf is not above 0"
	}
	if u, ok := m["uniqueItems"]; ok && json.Unmarshal(u, &p.unique) != nil {
		return "uniqueItems is not true or false"
	}
	if f, ok := m["format"]; ok && json.Unmarshal(f, &p.format) != nil {
		return "its format is not a name"
	}
	if pt, ok := m["pattern"]; ok {
		var src string
		if json.Unmarshal(pt, &src) != nil {
			return "its pattern is not text"
		}
		// A pattern RE2 cannot read (a look-ahead, say) is left to the
		// service, which checks it: the form checks what it can.
		p.pattern, _ = regexp.Compile(src)
	}
	switch p.typ {
	case "string":
		switch {
		case len(p.enum) > 0:
			p.kind = KindSelect
		case p.format == "uri" || p.format == "url":
			p.kind = KindURL
		case p.format == "email":
			p.kind = KindEmail
		case p.pattern == nil && p.format == "" && (m["contentMediaType"] != nil || p.maxLength == nil || *p.maxLength > multilineAbove):
			p.kind = KindTextarea
		default:
			p.kind = KindText
		}
	case "integer", "number":
		p.kind = KindNumber
		if p.typ == "integer" {
			p.kind = KindInteger
		}
		if len(p.enum) > 0 {
			p.kind = KindSelect
		}
	case "boolean":
		p.kind = KindCheckbox
	case "array":
		if !topLevel {
			return "it is a list of lists"
		}
		var im map[string]json.RawMessage
		if json.Unmarshal(m["items"], &im) != nil || im == nil {
			return "its items have no schema"
		}
		item := &prop{}
		if why := item.read(im, false); why != "" {
			return "its items: " + why
		}
		switch {
		case item.isConst || item.kind == KindCheckbox:
			return "it is a list of " + item.typ + "s"
		case len(item.enum) > 0:
			p.kind = KindChoices
			p.enum = item.enum
		default:
			p.kind = KindList
		}
		p.item = item
	case "":
		return "it declares no type"
	default:
		return "it is " + article(p.typ)
	}
	if p.hasDefault && !p.accepts(p.def) {
		// A default of another type is ignored rather than shown.
		p.hasDefault, p.def = false, nil
	}
	return ""
}

// accepts says whether v is a value of p's type, as a default must be.
func (p *prop) accepts(v any) bool {
	switch p.kind {
	case KindList, KindChoices:
		items, ok := v.([]any)
		if !ok {
			return false
		}
		for _, it := range items {
			if !scalarOf(p.item.typ, it) {
				return false
			}
		}
		return true
	}
	return scalarOf(p.typ, v)
}

func scalarOf(typ string, v any) bool {
	switch x := v.(type) {
	case string:
		return typ == "string"
	case float64:
		return typ == "number" || typ == "integer" && x == math.Trunc(x)
	case bool:
		return typ == "boolean"
	}
	return false
}

// enumType is the type of an enum without one: its values' if they share
// one.
func enumType(enum []any) string {
	t := ""
	for _, v := range enum {
		var vt string
		switch v.(type) {
		case string:
			vt = "string"
		case float64:
			vt = "number"
		default:
			return ""
		}
		if t != "" && t != vt {
			return ""
		}
		t = vt
	}
	return t
}

// count reads a non-negative whole number (2020-12 allows 10.0).
func count(raw json.RawMessage) (int, bool) {
	var x float64
	if json.Unmarshal(raw, &x) != nil || x < 0 || x != math.Trunc(x) || x > math.MaxInt32 {
		return 0, false
	}
	return int(x), true
}

func article(typ string) string {
	if typ == "object" || typ == "integer" || typ == "array" {
		return "an " + typ
	}
	if typ == "null" {
		return "null"
	}
	return "a " + strconv.Quote(typ)
}
