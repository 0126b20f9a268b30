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
	"slices"
	"strings"
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
	var routes []Route
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		item, _ := paths[p].(document)
		for _, m := range slices.Sorted(maps.Keys(item)) {
			op, ok := item[m].(document)
			if !ok {
				continue
			}
			routes = append(routes, Route{Method: strings.ToUpper(m), Path: p})
			adjustOperation(op)
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

// adjustOperation declares the error body and, for creations, 201.
func adjustOperation(op document) {
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
	responses["default"] = document{
		"description": "An error: 400 invalid parameter, 401 missing or invalid credentials, 403 scope or binding denied, 404 unknown route or object, 405 wrong method, 409 conflict, 5xx server error (retry with backoff).",
		"schema":      document{"$ref": "#/definitions/Error"},
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
