package events

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Schema is the JSON Schema (2020-12) of a Go type as encoding/json writes
// it, generated from its json tags so that the schema cannot drift from
// the type: a struct is an object of its fields, required unless optional
// (see Def), with no other properties; a field's tags add to its schema:
//
//	format:"uuid"          "format": "uuid" (time.Time is "date-time" by itself)
//	minimum:"1"            "minimum": 1
//	enum:"a,b"             "enum": ["a", "b"]
//	desc:"the slug"        "description": "the slug"
func Schema(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case t.Kind() == reflect.Struct:
		required := []string{}
		props := map[string]any{}
		for _, f := range fields(t) {
			props[f.name] = fieldSchema(f)
			if !f.optional {
				required = append(required, f.name)
			}
		}
		return map[string]any{"type": "object", "required": required, "properties": props, "additionalProperties": false}
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Map:
		return map[string]any{"type": "object"}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": Schema(t.Elem())}
	case reflect.Interface:
		return map[string]any{}
	}
	panic(fmt.Sprintf("events: no JSON Schema for %s", t))
}

func fieldSchema(f field) map[string]any {
	s := Schema(f.Type)
	if v := f.Tag.Get("format"); v != "" {
		s["format"] = v
	}
	if v := f.Tag.Get("minimum"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			panic(fmt.Sprintf("events: %s: minimum %q is not an integer", f.Name, v))
		}
		s["minimum"] = n
	}
	if v := f.Tag.Get("enum"); v != "" {
		var enum []any
		for e := range strings.SplitSeq(v, ",") {
			enum = append(enum, e)
		}
		s["enum"] = enum
	}
	if v := f.Tag.Get("desc"); v != "" {
		s["description"] = v
	}
	return s
}
