package openapi

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/atrium-hq/atrium/platform/value"
)

// converter turns the generator's Swagger 2.0 into OpenAPI 3.1: schemas
// become JSON Schema 2020-12 (nullable as a "null" type, examples as
// arrays), body parameters request bodies, response schemas contents, and
// references point at the renamed components.
type converter struct {
	names map[string]string
}

func (c converter) ref(v any) string {
	s, _ := v.(string)
	old := strings.TrimPrefix(s, "#/definitions/")
	if name, ok := c.names[old]; ok {
		return "#/components/schemas/" + name
	}
	return s
}

// schema converts one schema.
func (c converter) schema(v any) any {
	in, ok := v.(document)
	if !ok {
		return v
	}
	out := document{}
	for k, v := range in {
		switch k {
		case "$ref":
			out[k] = c.ref(v)
		case "properties":
			props := document{}
			for name, p := range v.(document) {
				props[name] = c.schema(p)
			}
			out[k] = props
		case "items", "additionalProperties", "not":
			out[k] = c.schema(v)
		case "allOf", "anyOf", "oneOf":
			var list []any
			for _, s := range v.([]any) {
				list = append(list, c.schema(s))
			}
			out[k] = list
		case "example":
			out["examples"] = []any{v}
		case "x-nullable", "collectionFormat", "in", "name", "required":
			// required is a list on a schema, a flag on a parameter.
			if k == "required" {
				if list, ok := v.([]any); ok {
					out[k] = list
				}
			}
		default:
			if !strings.HasPrefix(k, "x-") {
				out[k] = v
			}
		}
	}
	if _, ok := out["$ref"]; ok {
		// The generator writes "type": "object" beside a reference.
		delete(out, "type")
	}
	if in["x-nullable"] == true {
		out = nullable(out)
	}
	return out
}

// nullable lets a schema also be null.
func nullable(s document) document {
	if ref, ok := s["$ref"]; ok {
		out := document{"anyOf": []any{document{"$ref": ref}, document{"type": "null"}}}
		for k, v := range s {
			if k != "$ref" {
				out[k] = v
			}
		}
		return out
	}
	switch t := s["type"].(type) {
	case string:
		s["type"] = []any{t, "null"}
	case []any:
		s["type"] = append(t, "null")
	}
	if enum, ok := s["enum"].([]any); ok {
		s["enum"] = append(enum, nil)
	}
	return s
}

// pathItem converts the operations of one path.
func (c converter) pathItem(item document) document {
	out := document{}
	for method, op := range item {
		if op, ok := op.(document); ok {
			out[method] = c.operation(op)
		}
	}
	return out
}

func (c converter) operation(op document) document {
	out := document{}
	for _, k := range []string{"summary", "description", "operationId", "tags", "security", "deprecated"} {
		if v, ok := op[k]; ok {
			out[k] = v
		}
	}
	if summary, ok := out["summary"].(string); ok {
		summary = dropLintDirectives(summary)
		// The generator puts a whole comment in summary, which begins with
		// the RPC's name (Go style: "ListDeals lists ..."): the summary is
		// its first sentence without the name, the description the rest.
		id, _ := out["operationId"].(string)
		_, rpc, _ := strings.Cut(id, "_")
		if rest, ok := strings.CutPrefix(summary, rpc+" "); ok && rpc != "" && rest != "" {
			summary = strings.ToUpper(rest[:1]) + rest[1:]
		}
		out["summary"] = firstSentence(summary)
		if _, has := out["description"]; !has && out["summary"] != strings.Join(strings.Fields(summary), " ") {
			out["description"] = summary
		}
	}
	var params []any
	for _, p := range asList(op["parameters"]) {
		p := p.(document)
		switch p["in"] {
		case "body":
			body := document{
				"required": p["required"] == true,
				"content":  document{"application/json": document{"schema": c.schema(p["schema"])}},
			}
			if d, ok := p["description"]; ok {
				body["description"] = d
			}
			out["requestBody"] = body
		default:
			params = append(params, c.parameter(p))
		}
	}
	if len(params) > 0 {
		addParameterMaxima(out["operationId"], params)
		out["parameters"] = params
	}
	responses := document{}
	for code, r := range asDoc(op["responses"]) {
		responses[code] = c.response(r.(document))
	}
	out["responses"] = responses
	return out
}

// parameter converts a path, query or header parameter: its type and
// constraints go into a schema, and its comment is read as a property's.
func (c converter) parameter(p document) document {
	name, _ := p["name"].(string)
	describeValue(name, p)
	schema := document{}
	for k, v := range p {
		switch k {
		case "name", "in", "description", "required", "collectionFormat", "allowEmptyValue":
		case "items":
			schema[k] = c.schema(v)
		default:
			if !strings.HasPrefix(k, "x-") {
				schema[k] = v
			}
		}
	}
	out := document{"name": p["name"], "in": p["in"], "schema": schema}
	if p["in"] == "path" || p["required"] == true {
		out["required"] = true
	}
	if d, ok := p["description"]; ok {
		out["description"] = d
	}
	if schema["type"] == "array" {
		// Repeated query parameters: ?scope=read&scope=write.
		out["style"], out["explode"] = "form", true
	}
	return out
}

// addParameterMaxima shows the max_items of the request fields that query
// parameters carry (the event stream's events) as their maxItems.
func addParameterMaxima(operationID any, params []any) {
	id, _ := operationID.(string)
	md := methodOf(id)
	if md == nil {
		return
	}
	for _, p := range params {
		p := p.(document)
		name, _ := p["name"].(string)
		fd := md.Input().Fields().ByName(protoreflect.Name(name))
		if fd == nil {
			continue
		}
		if max, ok := value.MaxItems(fd); ok {
			if schema, _ := p["schema"].(document); schema["type"] == "array" {
				schema["maxItems"] = max
			}
		}
	}
}

func (c converter) response(r document) document {
	out := document{"description": r["description"]}
	if s, ok := r["schema"]; ok {
		out["content"] = document{"application/json": document{"schema": c.schema(s)}}
		if sd, _ := s.(document); strings.HasPrefix(fmt.Sprint(sd["title"]), "Stream result of ") {
			out["description"], out["content"] = streamResponse(c, sd)
		}
	}
	if hs := asDoc(r["headers"]); len(hs) > 0 {
		headers := document{}
		for name, h := range hs {
			h := h.(document)
			header := document{"schema": document{"type": h["type"]}}
			if d, ok := h["description"]; ok {
				header["description"] = d
			}
			headers[name] = header
		}
		out["headers"] = headers
	}
	return out
}

// dropLintDirectives drops the buf:lint lines of a comment.
func dropLintDirectives(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), "buf:lint:") {
			out = append(out, l)
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func asDoc(v any) document {
	d, _ := v.(document)
	return d
}

// streamResponse describes a server-streaming RPC's answer as the gateway
// writes it (gateway/eventstream.go): newline-delimited JSON, each line
// {"result": message} or, last, {"error": message} when the stream ends
// on an error after it began. protoc-gen-openapiv2 calls it
// application/json with a {"result", "error": Status} object.
func streamResponse(c converter, s document) (string, document) {
	props := asDoc(s["properties"])
	line := document{
		"type":        "object",
		"description": "One line of the stream: a result, or an error that ended it.",
		"properties": document{
			"result": c.schema(props["result"]),
			"error":  document{"type": "string", "description": "Why the stream ended early (the last line)."},
		},
	}
	return "A stream of newline-delimited JSON objects, one per line, flushed as they come.",
		document{"application/x-ndjson": document{"schema": line}}
}
