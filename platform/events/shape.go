package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"
)

// field is a struct field as its JSON sees it.
type field struct {
	reflect.StructField
	name     string
	optional bool
}

// fieldCache holds fields' answers: the webhooks service parses every
// event, and a type's fields never change.
var fieldCache sync.Map // reflect.Type → []field

// fields returns t's fields that JSON marshals, with their JSON names.
func fields(t reflect.Type) []field {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]field)
	}
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		optional := f.Tag.Get("event") == "optional"
		for o := range strings.SplitSeq(opts, ",") {
			optional = optional || o == "omitempty" || o == "omitzero"
		}
		out = append(out, field{f, name, optional})
	}
	fieldCache.Store(t, out)
	return out
}

// fieldOf returns t's field of JSON name name.
func fieldOf(t reflect.Type, name string) (field, bool) {
	for _, f := range fields(t) {
		if f.name == name {
			return f, true
		}
	}
	return field{}, false
}

var timeType = reflect.TypeFor[time.Time]()

// shape checks that raw has the shape of a t: every required field of a
// struct present, no null where t cannot hold one, and, when strict, no
// field t does not have. The types of values are left to json.Unmarshal,
// which names them. path is where raw is (added.ai; empty for the whole
// payload), for the error.
func shape(raw json.RawMessage, t reflect.Type, path string, strict bool) error {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		switch t.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
			return nil
		}
		if path == "" {
			return fmt.Errorf("is null, not a JSON object")
		}
		return fmt.Errorf("has %q null", path)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == timeType {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		if path == "" {
			return fmt.Errorf("is not a JSON object: %w", err)
		}
		return fmt.Errorf("has %q not a JSON object", path)
	}
	in := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	for _, f := range fields(t) {
		v, ok := m[f.name]
		if !ok {
			if !f.optional {
				return fmt.Errorf("has no %q", in(f.name))
			}
			continue
		}
		if err := shape(v, f.Type, in(f.name), strict); err != nil {
			return err
		}
	}
	if strict {
		for k := range m {
			if _, ok := fieldOf(t, k); !ok {
				return fmt.Errorf("has %q, which its definition does not", in(k))
			}
		}
	}
	return nil
}
