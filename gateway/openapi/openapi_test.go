package openapi

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

func loadDoc(t *testing.T, doc func(string) (Doc, error)) map[string]any {
	t.Helper()
	d, err := doc("test")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(d.JSON), "rendered_json") {
		t.Fatal("the document shows rendered_json, which is internal to the gateway and the services")
	}
	var out map[string]any
	if err := json.Unmarshal(d.JSON, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func dig(t *testing.T, v any, path ...string) any {
	t.Helper()
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: not an object at %q", strings.Join(path, "."), p)
		}
		v = m[p]
	}
	return v
}

func strs(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}

// TestDocumentsAreValidOpenAPI31 checks both documents with an
// independent implementation of OpenAPI 3.1 (pb33f's libopenapi): the
// document against the specification's schema, and every schema in it
// compiled as JSON Schema 2020-12, as a validator of requests and
// responses does.
func TestDocumentsAreValidOpenAPI31(t *testing.T) {
	for name, build := range map[string]func(string) (Doc, error){"public": Public, "admin": Admin} {
		t.Run(name, func(t *testing.T) {
			d, err := build("1.2.3")
			if err != nil {
				t.Fatal(err)
			}
			doc, err := libopenapi.NewDocument(d.JSON)
			if err != nil {
				t.Fatal(err)
			}
			if v := doc.GetVersion(); v != "3.1.0" {
				t.Fatalf("version %q, want 3.1.0", v)
			}
			v, errs := validator.NewValidator(doc)
			if len(errs) > 0 {
				t.Fatalf("building a validator: %v", errs)
			}
			if ok, verrs := v.ValidateDocument(); !ok {
				for _, e := range verrs {
					t.Errorf("%s: %s", e.Message, e.Reason)
					for _, s := range e.SchemaValidationErrors {
						t.Errorf("  %s at %s (line %d)", s.Reason, s.FieldPath, s.Line)
					}
				}
			}
			model, berr := doc.BuildV3Model()
			if berr != nil {
				t.Fatalf("building the model: %v", berr)
			}
			if model.Model.Components.Schemas.Len() < 20 {
				t.Fatalf("only %d schemas", model.Model.Components.Schemas.Len())
			}
		})
	}
}

// TestEveryHTTPRuleIsDocumented: every route a proto declares is in one of
// the two documents, with its method; no document shows a route the
// protos do not declare (beyond the gateway's own file and realtime
// routes).
func TestEveryHTTPRuleIsDocumented(t *testing.T) {
	pub, admin := loadDoc(t, Public), loadDoc(t, Admin)
	declared := map[string]bool{"get " + filesPath: true, "get " + realtimePath: true, "post " + realtimePath: true}
	for _, sd := range services() {
		for i := range sd.Methods().Len() {
			md := sd.Methods().Get(i)
			rule, ok := proto.GetExtension(md.Options().(*descriptorpb.MethodOptions), annotations.E_Http).(*annotations.HttpRule)
			if !ok || rule == nil {
				continue
			}
			for _, r := range append([]*annotations.HttpRule{rule}, rule.GetAdditionalBindings()...) {
				method, path := httpRule(r)
				declared[method+" "+path] = true
				doc := pub
				if strings.HasPrefix(path, "/admin/") {
					doc = admin
				}
				item, _ := doc["paths"].(map[string]any)[path].(map[string]any)
				if _, ok := item[method]; !ok {
					t.Errorf("%s (%s %s) is not documented", md.FullName(), method, path)
				}
			}
		}
	}
	for _, doc := range []map[string]any{pub, admin} {
		for p, item := range doc["paths"].(map[string]any) {
			for m := range item.(map[string]any) {
				if !declared[m+" "+p] {
					t.Errorf("%s %s is documented but declared by no RPC", m, p)
				}
			}
		}
	}
}

func httpRule(r *annotations.HttpRule) (method, path string) {
	switch p := r.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		return "get", p.Get
	case *annotations.HttpRule_Post:
		return "post", p.Post
	case *annotations.HttpRule_Patch:
		return "patch", p.Patch
	case *annotations.HttpRule_Put:
		return "put", p.Put
	case *annotations.HttpRule_Delete:
		return "delete", p.Delete
	}
	return "", ""
}

func TestSchemasSayWhatTheAPIChecks(t *testing.T) {
	pub := loadDoc(t, Public)
	prospect := dig(t, pub, "components", "schemas", "Prospect")
	if got := strs(dig(t, prospect, "properties", "pipeline_stage", "enum")); !slices.Equal(got,
		[]string{"new", "contacted", "qualified", "proposal_sent", "negotiation", "won", "lost"}) {
		t.Fatalf("pipeline_stage enum = %v", got)
	}
	if f := dig(t, prospect, "properties", "id", "format"); f != "uuid" {
		t.Fatalf("prospect id format = %v, want uuid", f)
	}
	if f := dig(t, prospect, "properties", "created_at", "format"); f != "date-time" {
		t.Fatalf("created_at format = %v, want date-time", f)
	}
	if req := strs(dig(t, prospect, "required")); len(req) != 10 {
		t.Fatalf("prospect required = %v, want all 10 fields (every one is always in the JSON)", req)
	}
	deal := dig(t, pub, "components", "schemas", "Deal")
	if f := dig(t, deal, "properties", "expected_close_date", "format"); f != "date" {
		t.Fatalf("expected_close_date format = %v, want date", f)
	}
	if got := dig(t, deal, "properties", "closed_at", "type"); !slices.Equal(strs(got), []string{"string", "null"}) {
		t.Fatalf("closed_at type = %v, want string or null (null while the deal is open)", got)
	}

	admin := loadDoc(t, Admin)
	createKey := dig(t, admin, "components", "schemas", "CreateKeyRequest")
	if got := strs(dig(t, createKey, "required")); !slices.Equal(got, []string{"name", "scopes"}) {
		t.Fatalf("create key required = %v", got)
	}
	if got := strs(dig(t, createKey, "properties", "scopes", "items", "enum")); !slices.Equal(got, []string{"read", "write"}) {
		t.Fatalf("scopes enum = %v", got)
	}
	if req := strs(dig(t, admin, "components", "schemas", "APIKey", "required")); slices.Contains(req, "secret") || !slices.Contains(req, "site_id") {
		t.Fatalf("API key required = %v: secret is present only at creation, site_id always (null when unset)", req)
	}
	// A query parameter's comment is read as a property's.
	for _, p := range dig(t, pub, "paths", "/api/v1/prospects", "get", "parameters").([]any) {
		if p.(map[string]any)["name"] == "pipeline_stage" {
			if got := strs(dig(t, p, "schema", "enum")); len(got) != 7 {
				t.Fatalf("pipeline_stage parameter enum = %v", got)
			}
		}
	}
}

func TestEveryRouteListsItsErrors(t *testing.T) {
	pub := loadDoc(t, Public)
	list := dig(t, pub, "paths", "/api/v1/prospects", "get", "responses").(map[string]any)
	for _, code := range []string{"200", "400", "401", "403", "429", "500", "503", "504"} {
		if _, ok := list[code]; !ok {
			t.Errorf("GET /api/v1/prospects does not document %s", code)
		}
	}
	if _, ok := list["404"]; ok {
		t.Error("GET /api/v1/prospects documents 404 but names no object in its path")
	}
	if ref := dig(t, list, "400", "$ref"); ref != "#/components/responses/BadRequest" {
		t.Errorf("400 = %v, want the BadRequest response", ref)
	}
	if ref := dig(t, list, "200", "headers", "Atrium-Trace-Id", "$ref"); ref != "#/components/headers/TraceId" {
		t.Errorf("200 does not declare Atrium-Trace-Id: %v", ref)
	}
	if ref := dig(t, pub, "components", "responses", "TooManyRequests", "headers", "Retry-After", "$ref"); ref != "#/components/headers/RetryAfter" {
		t.Errorf("429 does not declare Retry-After: %v", ref)
	}
	if ref := dig(t, pub, "components", "responses", "BadRequest", "content", "application/json", "schema", "$ref"); ref != "#/components/schemas/Error" {
		t.Errorf("400 body = %v, want the error body", ref)
	}
	patch := dig(t, pub, "paths", "/api/public/v1/collections/{collection_slug}/{item_id}", "patch").(map[string]any)
	for _, code := range []string{"200", "400", "403", "404", "412", "413"} {
		if _, ok := patch["responses"].(map[string]any)[code]; !ok {
			t.Errorf("PATCH of an item does not document %s", code)
		}
	}
	if !slices.ContainsFunc(patch["parameters"].([]any), func(p any) bool { return p.(map[string]any)["name"] == "If-Match" }) {
		t.Error("PATCH of an item does not take If-Match")
	}
	run := dig(t, pub, "paths", "/api/v1/data", "post", "responses").(map[string]any)
	for _, code := range []string{"402", "409", "422"} {
		if _, ok := run[code]; !ok {
			t.Errorf("POST /api/v1/data does not document %s", code)
		}
	}
	admin := loadDoc(t, Admin)
	create := dig(t, admin, "paths", "/admin/v1/keys", "post", "responses").(map[string]any)
	for _, code := range []string{"201", "400", "401", "413", "503"} {
		if _, ok := create[code]; !ok {
			t.Errorf("POST /admin/v1/keys does not document %s", code)
		}
	}
	for _, code := range []string{"200", "429", "403"} {
		if _, ok := create[code]; ok {
			t.Errorf("POST /admin/v1/keys documents %s (it answers 201; the admin API is not rate limited and has no scopes)", code)
		}
	}
	revoke := dig(t, admin, "paths", "/admin/v1/keys/{key_id}", "delete").(map[string]any)
	if _, ok := revoke["responses"].(map[string]any)["404"]; !ok {
		t.Error("DELETE /admin/v1/keys/{key_id} does not document 404")
	}
	if f := dig(t, revoke["parameters"].([]any)[0], "schema", "format"); f != "uuid" {
		t.Errorf("key_id format = %v, want uuid", f)
	}
}

// TestSecuritySaysTheScope: the security requirement names the scope the
// RPC's access rule needs, and the description the binding.
func TestSecuritySaysTheScope(t *testing.T) {
	pub := loadDoc(t, Public)
	for path, want := range map[string]string{"/api/v1/prospects get": "read", "/api/v1/data post": "write", "/api/v1/webhooks post": "write"} {
		p, m, _ := strings.Cut(path, " ")
		op := dig(t, pub, "paths", p, m)
		if got := strs(dig(t, op.(map[string]any)["security"].([]any)[0], "bearer")); !slices.Equal(got, []string{want}) {
			t.Errorf("%s security scopes = %v, want %s", path, got, want)
		}
		if d, _ := op.(map[string]any)["description"].(string); !strings.Contains(d, "bound to") {
			t.Errorf("%s description does not say what the key must be bound to: %q", path, d)
		}
	}
}

// TestAssetsRoutesAreDocumentedAsServed: the upload is a multipart form
// or the raw file (not the gRPC stream the generator sees), created with
// 201 and refused with 413 over the limit; the files are served without a
// key.
func TestAssetsRoutesAreDocumentedAsServed(t *testing.T) {
	pub := loadDoc(t, Public)
	upload := dig(t, pub, "paths", "/api/public/v1/assets", "post").(map[string]any)
	content := dig(t, upload, "requestBody", "content").(map[string]any)
	if _, ok := content["multipart/form-data"]; !ok {
		t.Fatalf("upload content %v", slices.Collect(maps.Keys(content)))
	}
	if _, ok := content["image/png"]; !ok {
		t.Fatalf("the raw form is not documented: %v", slices.Collect(maps.Keys(content)))
	}
	if got := strs(dig(t, content["multipart/form-data"], "schema", "required")); !slices.Equal(got, []string{"file"}) {
		t.Fatalf("multipart required %v", got)
	}
	for _, code := range []string{"201", "400", "401", "403", "413"} {
		if _, ok := upload["responses"].(map[string]any)[code]; !ok {
			t.Errorf("the upload does not document %s", code)
		}
	}
	if ref := dig(t, upload, "responses", "201", "content", "application/json", "schema", "$ref"); ref != "#/components/schemas/CreateAssetResponse" {
		t.Errorf("201 schema %v", ref)
	}
	for _, p := range []string{"/files/{name}/{filename}", "/media/{name}"} {
		get := dig(t, pub, "paths", p, "get").(map[string]any)
		if sec, ok := get["security"].([]any); !ok || len(sec) != 0 {
			t.Errorf("%s security = %v, want none", p, get["security"])
		}
		for _, code := range []string{"200", "206", "304", "404", "416"} {
			if _, ok := get["responses"].(map[string]any)[code]; !ok {
				t.Errorf("%s does not document %s", p, code)
			}
		}
	}
	asset := dig(t, pub, "components", "schemas", "Asset")
	if got := strs(dig(t, asset, "properties", "content_type", "enum")); len(got) != 8 || got[0] != "image/jpeg" {
		t.Errorf("content_type enum %v", got)
	}
	if got := strs(dig(t, asset, "properties", "width", "type")); !slices.Equal(got, []string{"integer", "null"}) {
		t.Errorf("width type = %v, want integer or null", got)
	}
}

// TestDatasetRowsAreTheCatalogs: the data read's rows are the catalog's
// (every field present, null when it has no value) and its resource an
// enumeration of the catalog's names.
func TestDatasetRowsAreTheCatalogs(t *testing.T) {
	pub := loadDoc(t, Public)
	rows := dig(t, pub, "components", "schemas", "ReadDatasetResponse", "properties", "data", "items", "anyOf").([]any)
	if len(rows) < 33 {
		t.Fatalf("%d row schemas, want every dataset's", len(rows))
	}
	kw := dig(t, pub, "components", "schemas", "KeywordsRow")
	if f := dig(t, kw, "properties", "created_at", "format"); f != "date" {
		t.Errorf("keywords created_at format %v, want date", f)
	}
	if got := strs(dig(t, kw, "properties", "position", "type")); !slices.Equal(got, []string{"number", "null"}) {
		t.Errorf("position type %v", got)
	}
	if dig(t, kw, "additionalProperties") != false || len(strs(dig(t, kw, "required"))) != 14 {
		t.Errorf("keywords rows: additionalProperties %v, required %v", dig(t, kw, "additionalProperties"), dig(t, kw, "required"))
	}
	for _, p := range dig(t, pub, "paths", "/api/v1/data", "get", "parameters").([]any) {
		if p.(map[string]any)["name"] == "resource" {
			if names := strs(dig(t, p, "schema", "enum")); !slices.Contains(names, "keywords") || names[0] != "clients" {
				t.Errorf("resource enum %v", names)
			}
		}
	}
	admin := loadDoc(t, Admin)
	if got := strs(dig(t, admin, "components", "schemas", "NewKeywordsRow", "required")); !slices.Equal(got, []string{"keyword"}) {
		t.Errorf("a new keyword row requires %v, want [keyword]", got)
	}
}

func TestOperationExtrasNameOperations(t *testing.T) {
	ops := map[string]bool{}
	for _, doc := range []map[string]any{loadDoc(t, Public), loadDoc(t, Admin)} {
		for _, item := range doc["paths"].(map[string]any) {
			for _, op := range item.(map[string]any) {
				ops[op.(map[string]any)["operationId"].(string)] = true
			}
		}
	}
	for id := range operationExtras {
		if !ops[id] {
			t.Errorf("operationExtras names %s, which no route has", id)
		}
	}
	if methodOf("CRMService_ListProspects") == nil {
		t.Fatal("methodOf finds no RPC for CRMService_ListProspects")
	}
}

// TestActionRequestsAreTheCatalogs checks the action request as a client
// generator reads it: a oneOf of one schema per action, discriminated by
// action, with an example per action; and, through an independent request
// validator, that every example is a valid request and that requests the
// service refuses (an unknown action, a field of another action, a value
// past a bound) are invalid by the document too.
func TestActionRequestsAreTheCatalogs(t *testing.T) {
	pub := loadDoc(t, Public)
	media := dig(t, pub, "paths", "/api/v1/data", "post", "requestBody", "content", "application/json")
	oneOf := dig(t, media, "schema", "oneOf").([]any)
	mapping := dig(t, media, "schema", "discriminator", "mapping").(map[string]any)
	examples := dig(t, media, "examples").(map[string]any)
	if len(oneOf) != 18 || len(mapping) != 18 || len(examples) != 18 {
		t.Fatalf("%d request schemas, %d discriminator mappings, %d examples; want one of each per action (18)", len(oneOf), len(mapping), len(examples))
	}
	if ref := mapping["seo_audit"]; ref != "#/components/schemas/SeoAuditRequest" {
		t.Fatalf("seo_audit maps to %v", ref)
	}
	audit := dig(t, pub, "components", "schemas", "SeoAuditRequest")
	if got := strs(dig(t, audit, "required")); !slices.Equal(got, []string{"action", "client_id", "url"}) {
		t.Errorf("seo_audit requires %v", got)
	}
	if d := dig(t, audit, "description").(string); !strings.HasSuffix(d, "Costs 1 data credit.") {
		t.Errorf("seo_audit description %q does not say its cost", d)
	}
	for code := range dig(t, pub, "paths", "/api/v1/data", "post", "responses").(map[string]any) {
		if code == "200" {
			results := dig(t, pub, "paths", "/api/v1/data", "post", "responses", "200", "content", "application/json", "schema", "oneOf").([]any)
			if len(results) != 18 {
				t.Errorf("%d result schemas, want 18", len(results))
			}
		}
	}

	d, err := Public("test")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := libopenapi.NewDocument(d.JSON)
	if err != nil {
		t.Fatal(err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	validate := func(body map[string]any) []string {
		b, _ := json.Marshal(body)
		req := httptest.NewRequest(http.MethodPost, "/api/v1/data", bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer atr_test")
		_, verrs := v.ValidateHttpRequest(req)
		var out []string
		for _, e := range verrs {
			out = append(out, e.Message+": "+e.Reason)
		}
		return out
	}
	for name, ex := range examples {
		body := dig(t, ex, "value").(map[string]any)
		if body["action"] != name {
			t.Errorf("the example of %s is for %v", name, body["action"])
		}
		if problems := validate(body); len(problems) > 0 {
			t.Errorf("the example of %s is not a valid request by the document: %v", name, problems)
		}
	}
	client := "0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b"
	for what, body := range map[string]map[string]any{
		"an unknown action":       {"action": "make_coffee", "client_id": client},
		"another action's field":  {"action": "seo_audit", "client_id": client, "url": "https://example.com/", "keyword": "rye"},
		"a missing field":         {"action": "generate_blog", "client_id": client},
		"a value past its bound":  {"action": "generate_topical_map", "client_id": client, "topic": "bread", "depth": 4},
		"a value outside its set": {"action": "generate_blog", "client_id": client, "keyword": "rye", "tone": "grumpy"},
	} {
		if p := validate(body); len(p) == 0 {
			t.Errorf("a request with %s is valid by the document: %v", what, body)
		} else {
			t.Logf("%s: %v", what, p)
		}
	}
}

// TestSchemasShowTheMaxima: the maximum a request's list or object may
// hold (the proto's max_items, enforced on every request) is the
// document's maxItems or maxProperties, in request messages, in the
// generator's bodies, in nested messages and in query parameters.
func TestSchemasShowTheMaxima(t *testing.T) {
	pub, admin := loadDoc(t, Public), loadDoc(t, Admin)
	for _, c := range []struct {
		doc  map[string]any
		path []string
		want float64
	}{
		{pub, []string{"components", "schemas", "CreateWebhookRequest", "properties", "events", "maxItems"}, 64},
		{pub, []string{"components", "schemas", "WebhooksServiceUpdateWebhookBody", "properties", "events", "maxItems"}, 64},
		{pub, []string{"components", "schemas", "CollectionsServiceCreateItemBody", "properties", "data", "maxProperties"}, 200},
		{admin, []string{"components", "schemas", "CollectionsAdminServiceCreateCollectionBody", "properties", "fields", "maxItems"}, 200},
		{admin, []string{"components", "schemas", "FieldDefinition", "properties", "options", "maxItems"}, 500},
		{admin, []string{"components", "schemas", "CollectionsAdminServiceSetSiteOriginsBody", "properties", "allowed_origins", "maxItems"}, 50},
		{admin, []string{"components", "schemas", "CollectionsAdminServiceSetSiteLocalesBody", "properties", "locales", "maxItems"}, 30},
		{admin, []string{"components", "schemas", "CreateKeyRequest", "properties", "scopes", "maxItems"}, 8},
		{admin, []string{"components", "schemas", "DataAdminServiceCreateRowsBody", "properties", "rows", "maxItems"}, 10000},
	} {
		if got := dig(t, c.doc, c.path...); got != c.want {
			t.Errorf("%s = %v, want %v", strings.Join(c.path, "."), got, c.want)
		}
	}
	for _, p := range dig(t, pub, "paths", "/api/v1/event-stream", "get", "parameters").([]any) {
		if p.(map[string]any)["name"] == "events" {
			if got := dig(t, p, "schema", "maxItems"); got != float64(64) {
				t.Errorf("the event stream's events parameter has maxItems %v, want 64", got)
			}
		}
	}
}
