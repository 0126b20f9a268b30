// Package openapi serves the OpenAPI (Swagger 2.0) documents of the gateway's
// two listeners. protoc-gen-openapiv2 generates one file per proto file into
// this directory (make generate); this package merges them into a public
// document (/openapi.json on the public listener) and an admin document (on
// the admin listener), and adds what the generator cannot know: the
// {"error": "..."} body, 201 for creations, nullable fields, bearer auth.
package openapi

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"regexp"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/atrium-hq/atrium/platform/render"
	// The messages the documents describe, for their field presence.
	_ "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	_ "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

//go:embed atrium
var files embed.FS

// Route is one method on one path template.
type Route struct {
	Method string
	Path   string
}

// Doc is a merged document.
type Doc struct {
	JSON   []byte
	Routes []Route
}

// Public is the document of the public listener.
func Public(version string) (Doc, error) {
	return build(version, "Atrium API", "The Atrium API: collections, agency CRM lists, per-client data and actions. Authenticate with \"Authorization: Bearer <API key>\".",
		func(p string) bool { return strings.HasPrefix(p, "/api/") })
}

// Admin is the document of the admin listener.
func Admin(version string) (Doc, error) {
	return build(version, "Atrium admin API", "Provisioning of sites, agencies, members, clients, API keys, prospects and deals. Authenticate with \"Authorization: Bearer <admin token>\".",
		func(p string) bool { return strings.HasPrefix(p, "/admin/") })
}

type document = map[string]any

func build(version, title, description string, keep func(path string) bool) (Doc, error) {
	paths, defs := document{}, document{}
	err := fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(name, ".swagger.json") {
			return err
		}
		b, err := files.ReadFile(name)
		if err != nil {
			return err
		}
		var doc struct {
			Paths       document `json:"paths"`
			Definitions document `json:"definitions"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		kept := false
		for p, item := range doc.Paths {
			if keep(p) {
				paths[p] = item
				kept = true
			}
		}
		if kept {
			maps.Copy(defs, doc.Definitions)
		}
		return nil
	})
	if err != nil {
		return Doc{}, err
	}
	defs["Error"] = document{
		"type":       "object",
		"required":   []string{"error"},
		"properties": document{"error": document{"type": "string", "description": "What was wrong and what is allowed."}},
	}
	markNullable(defs)
	describeProperties(defs)
	markAlwaysPresent(defs)
	var routes []Route
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		item, _ := paths[p].(document)
		for _, m := range slices.Sorted(maps.Keys(item)) {
			op, ok := item[m].(document)
			if !ok {
				continue
			}
			routes = append(routes, Route{Method: strings.ToUpper(m), Path: p})
			adjustOperation(op, m, p, strings.HasPrefix(p, "/api/"))
		}
	}
	out := document{
		"swagger":             "2.0",
		"info":                document{"title": title, "description": description, "version": version},
		"consumes":            []string{"application/json"},
		"produces":            []string{"application/json"},
		"securityDefinitions": document{"bearer": document{"type": "apiKey", "name": "Authorization", "in": "header"}},
		"security":            []document{{"bearer": []string{}}},
		"paths":               paths,
		"definitions":         defs,
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return Doc{}, err
	}
	return Doc{JSON: b, Routes: routes}, nil
}

// adjustOperation declares the errors the route can answer, each with the
// error body, and 201 for creations.
func adjustOperation(op document, method, path string, tenant bool) {
	responses, _ := op["responses"].(document)
	if responses == nil {
		responses = document{}
		op["responses"] = responses
	}
	if id, _ := op["operationId"].(string); strings.Contains(id, "_Create") {
		if ok, found := responses["200"]; found {
			delete(responses, "200")
			if r, isDoc := ok.(document); isDoc {
				r["description"] = "Created."
			}
			responses["201"] = ok
		}
	}
	delete(responses, "default")
	errorResponse := func(description string) document {
		return document{"description": description, "schema": document{"$ref": "#/definitions/Error"}}
	}
	responses["400"] = errorResponse("A query parameter, path parameter or body field is invalid; the message names it and what is allowed.")
	if tenant {
		responses["401"] = errorResponse("The API key is missing, malformed, unknown, expired or revoked.")
		responses["403"] = errorResponse("The key lacks the scope this route needs, or is not bound to what the route reads.")
		responses["429"] = errorResponse("The API key is over the deployment's rate limit (when one is set). Retry after the Retry-After header.")
	} else {
		responses["401"] = errorResponse("The admin token is missing or wrong.")
	}
	if strings.Contains(path, "{") {
		responses["404"] = errorResponse("The object named in the path does not exist (or belongs to another tenant).")
	}
	params, _ := op["parameters"].([]any)
	for _, prm := range params {
		if prm, _ := prm.(document); prm["in"] == "body" {
			responses["413"] = errorResponse("The request body is larger than the gateway's limit.")
		}
	}
	if tenant && strings.Contains(path, "{item_id}") && (method == "patch" || method == "delete") {
		responses["412"] = errorResponse("An If-Match header does not match the item's current ETag; nothing changed.")
	}
	responses["500"] = errorResponse("A fault; the message carries a reference to quote. Retry with backoff.")
	responses["503"] = errorResponse("A backing service is unavailable, a write collided with others, the server is at its limit of requests in flight, or it is shutting down. Retry after the Retry-After header.")
	responses["504"] = errorResponse("The request ran out of time. Retry with backoff.")
	for _, prm := range params {
		if prm, _ := prm.(document); prm["in"] == "path" && isIDName(prm["name"]) {
			prm["format"] = "uuid"
		}
	}
}

var (
	oneOf    = regexp.MustCompile(`(?:One|Subset|One or both) of: ([a-z0-9_]+(?:, [a-z0-9_]+)*)`)
	dateOnly = regexp.MustCompile(`\bYYYY-MM-DD\b`)
)

func isIDName(v any) bool {
	name, _ := v.(string)
	return name == "id" || strings.HasSuffix(name, "_id")
}

// describeProperties turns what the proto comments state into schema:
// "One of: a, b" and "Subset of: a, b" become enumerations, "YYYY-MM-DD" the
// date format, and every id a UUID. It drops rendered_json.
func describeProperties(defs document) {
	for _, d := range defs {
		props, _ := d.(document)["properties"].(document)
		delete(props, render.Field)
		for name, p := range props {
			prop, _ := p.(document)
			desc, _ := prop["description"].(string)
			target := prop
			if prop["type"] == "array" {
				target, _ = prop["items"].(document)
			}
			if target == nil || target["type"] != "string" {
				continue
			}
			if m := oneOf.FindStringSubmatch(desc); m != nil {
				target["enum"] = strings.Split(m[1], ", ")
			}
			if dateOnly.MatchString(desc) {
				target["format"] = "date"
			}
			if isIDName(name) {
				target["format"] = "uuid"
			}
		}
	}
}

// responseDefinition is the proto message behind a definition the
// generator named v1<Message>, when it is not a request.
func responseDefinition(name string) protoreflect.MessageDescriptor {
	msg, ok := strings.CutPrefix(name, "v1")
	if !ok || strings.HasSuffix(msg, "Request") {
		return nil
	}
	for _, pkg := range []string{"atrium.crm.v1.", "atrium.collections.v1."} {
		if d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(pkg + msg)); err == nil {
			if md, ok := d.(protoreflect.MessageDescriptor); ok {
				return md
			}
		}
	}
	return nil
}

// markAlwaysPresent lists as required every response field the JSON always
// carries: all of them (unset ones print as null or a zero value) except
// proto3 optional fields, which are left out when unset.
func markAlwaysPresent(defs document) {
	for name, d := range defs {
		md := responseDefinition(name)
		if md == nil {
			continue
		}
		props, _ := d.(document)["properties"].(document)
		var required []string
		for i := range md.Fields().Len() {
			f := md.Fields().Get(i)
			if _, shown := props[string(f.Name())]; shown && !f.HasOptionalKeyword() {
				required = append(required, string(f.Name()))
			}
		}
		if len(required) > 0 {
			d.(document)["required"] = required
		}
	}
}

// markNullable flags the properties whose description says they may be
// null (unset timestamps and wrapped strings print as null).
func markNullable(defs document) {
	for _, d := range defs {
		props, _ := d.(document)["properties"].(document)
		for _, p := range props {
			prop, _ := p.(document)
			if desc, _ := prop["description"].(string); strings.Contains(strings.ToLower(desc), "null") {
				prop["x-nullable"] = true
			}
		}
	}
}
