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

// The generator's Swagger 2.0 files (one per proto file, make generate)
// and the catalogs the services generate into catalog/ (go generate).
//
//go:embed atrium catalog
var files embed.FS

// Doc is a listener's document, as served.
type Doc struct {
	JSON []byte
}

// Public is the document of the public listener.
func Public(version string) (Doc, error) {
	return build(listener{
		title:       "Atrium API",
		description: publicDescription,
		tenant:      true,
		keep:        func(p string) bool { return strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/media/") },
	}, version)
}

// Admin is the document of the admin listener.
func Admin(version string) (Doc, error) {
	return build(listener{
		title:       "Atrium admin API",
		description: adminDescription,
		keep:        func(p string) bool { return strings.HasPrefix(p, "/admin/") },
	}, version)
}

const (
	publicDescription = "The Atrium API: collections and assets (a headless CMS per site), the agency CRM lists, " +
		"per-client data (GET /api/v1/data), actions that spend credits (POST /api/v1/data) and webhooks.\n\n" +
		"Authenticate with `Authorization: Bearer <API key>`, or, for people, with the session cookie of POST /api/v1/sessions (docs/authentication.md). A read key calls the GET routes, a write key every route; " +
		"a site's key reaches its site's collections, an agency's key its agency's clients, lists, actions and webhooks. " +
		"Files (/files/, /media/) are served without a key: their names are unguessable capabilities.\n\n" +
		"Every answer carries `Atrium-Trace-Id`; every error is `{\"error\": \"<what was wrong and what is allowed>\"}`. " +
		"Retry 5xx answers, network errors and time-outs only, with exponential backoff and jitter, honouring Retry-After; " +
		"send an Idempotency-Key with every action so that a retried action never runs twice. " +
		"The Go SDK (sdk/go) does all of this."
	adminDescription = "Provisioning of sites, agencies, members, clients, API keys, credits, prospects and deals, and dataset rows. " +
		"Authenticate with `Authorization: Bearer <admin token>`. Every answer carries `Atrium-Trace-Id`; every error is `{\"error\": \"...\"}`."
)

// listener is what differs between the two documents.
type listener struct {
	title, description string
	// tenant: the routes are called with API keys (scopes, bindings and a
	// rate limit), not the admin token.
	tenant bool
	keep   func(path string) bool
}

type document = map[string]any

// build merges the generator's files into one OpenAPI 3.1 document: the
// Swagger 2.0 schemas are first completed with what the protos say in
// their comments and field presence (schemas.go), then converted
// (convert.go); then come what the generator cannot know: the errors of
// each route (errors.go), the rows of each dataset and the request and
// result of each action from the services' catalogs (catalogs.go), and the
// routes the gateway serves itself (files.go).
func build(l listener, version string) (Doc, error) {
	paths, defs, err := load(l.keep)
	if err != nil {
		return Doc{}, err
	}
	if err := completeSchemas(defs); err != nil {
		return Doc{}, err
	}
	names, err := schemaNames(defs)
	if err != nil {
		return Doc{}, err
	}
	c := converter{names: names}
	schemas := document{}
	for old, d := range defs {
		schemas[names[old]] = c.schema(d)
	}
	out := document{}
	for p, item := range paths {
		out[p] = c.pathItem(item.(document))
	}
	doc := document{
		"openapi": "3.1.0",
		"info": document{
			"title": l.title, "description": l.description, "version": version,
		},
		"servers":  []any{document{"url": "/", "description": "This deployment."}},
		"security": []any{document{"bearer": []any{}}},
		"tags":     tags(out),
		"paths":    out,
		"components": document{
			"securitySchemes": document{
				"bearer": document{
					"type": "http", "scheme": "bearer",
					"description": bearerDescription(l.tenant),
				},
			},
			"schemas":   schemas,
			"responses": document{},
			"headers":   document{},
		},
	}
	if l.tenant {
		// A signed-in person's session (docs/authentication.md): the
		// cookie, with X-CSRF-Token on unsafe methods. The admin
		// listener takes no session.
		asDoc(asDoc(doc["components"])["securitySchemes"])["session"] = document{
			"type": "apiKey", "in": "cookie", "name": "atrium_session",
			"description": "The session cookie set by POST /api/v1/sessions (or by accepting an invitation), accepted only from the API's own origin. " +
				"Unsafe methods (POST, PUT, PATCH, DELETE) also need the session's csrf_token in the X-CSRF-Token header. " +
				"The Atrium-Agency header picks which of the person's agencies a request acts for (default: their first), " +
				"and Atrium-Site the site of a collections route (default: an editor's only site). See docs/authentication.md.",
		}
	}
	if err := completeDocument(doc, l); err != nil {
		return Doc{}, err
	}
	prune(doc)
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return Doc{}, err
	}
	return Doc{JSON: b}, nil
}

func bearerDescription(tenant bool) string {
	if tenant {
		return "An Atrium API key (atr_…), from the admin API's POST /admin/v1/keys."
	}
	return "The deployment's admin token (--admin-token)."
}

// load merges the generator's files: the paths the listener keeps, and
// the definitions of the files that have any.
func load(keep func(string) bool) (paths, defs document, err error) {
	paths, defs = document{}, document{}
	err = fs.WalkDir(files, "atrium", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(name, ".swagger.json") {
			return err
		}
		b, err := files.ReadFile(name)
		if err != nil {
			return err
		}
		var f struct {
			Paths       document `json:"paths"`
			Definitions document `json:"definitions"`
		}
		if err := json.Unmarshal(b, &f); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		kept := false
		for p, item := range f.Paths {
			if keep(p) {
				// Two services may serve one path (GET and POST
				// /api/v1/data): their methods merge.
				merged, _ := paths[p].(document)
				if merged == nil {
					merged = document{}
					paths[p] = merged
				}
				maps.Copy(merged, item.(document))
				kept = true
			}
		}
		if kept {
			maps.Copy(defs, f.Definitions)
		}
		return nil
	})
	return paths, defs, err
}

// completeDocument adds to the converted document what the generator
// cannot know, in the order each step needs the last.
func completeDocument(doc document, l listener) error {
	addSharedComponents(doc, l)
	if err := addCatalogs(doc, l); err != nil {
		return err
	}
	if l.tenant {
		addFileRoutes(doc)
		addRealtimeRoutes(doc)
	}
	return forEachOperation(doc, func(_, path string, op document) error {
		return completeOperation(l, path, op)
	})
}

// forEachOperation calls fn for every operation, in a fixed order.
func forEachOperation(doc document, fn func(method, path string, op document) error) error {
	paths := doc["paths"].(document)
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		item := paths[p].(document)
		for _, m := range slices.Sorted(maps.Keys(item)) {
			op, ok := item[m].(document)
			if !ok {
				continue
			}
			if err := fn(m, p, op); err != nil {
				return fmt.Errorf("%s %s: %w", strings.ToUpper(m), p, err)
			}
		}
	}
	return nil
}

// tags lists the services the operations are tagged with, each described.
func tags(paths document) []any {
	seen := map[string]bool{}
	for _, item := range paths {
		for _, op := range item.(document) {
			if op, ok := op.(document); ok {
				for _, t := range op["tags"].([]any) {
					seen[t.(string)] = true
				}
			}
		}
	}
	var out []any
	for _, t := range slices.Sorted(maps.Keys(seen)) {
		tag := document{"name": t}
		if d, ok := tagDescriptions[t]; ok {
			tag["description"] = d
		}
		out = append(out, tag)
	}
	return out
}

var tagDescriptions = map[string]string{
	"CollectionsService":      "A site's collections and their items: the headless CMS. Site keys.",
	"AssetsService":           "A site's files: upload, list, describe, delete. Site keys.",
	"PreviewLinksService":     "Links that show one item, drafts included, without a key until they expire or are revoked. Site write keys; the link itself needs none.",
	"CRMService":              "The agency's prospects and deals. Agency keys.",
	"AgencyClientsService":    "The clients linked to the agency, by name. Agency keys.",
	"SchemaService":           "The agency's sites (agency keys), and a site's collection definitions: fields, types, search language (site keys; of the people, owners only).",
	"DataService":             "Per-client datasets: GET /api/v1/data. Agency keys.",
	"ActionsService":          "Actions that spend credits (POST /api/v1/data), their discovery and the credit balance. Agency keys.",
	"ReportsService":          "How the agency's client reports (generate_report) look: its branding. Agency keys.",
	"SchedulesService":        "Schedules: an action run for a client at the slots of a cron or every day/week/month, exactly once per slot, within a monthly credit cap (docs/schedules.md). Agency keys.",
	"WebhooksService":         "Webhook endpoints, their deliveries and the event types. Site or agency keys.",
	"AuditService":            "The agency's audit trail: who changed what, when and from where. Owners signed in; no API key.",
	"PeopleService":           "The agency's members, their invitations and the agency's API keys. Owners signed in; no API key.",
	"SessionService":          "Signing in and out (the session cookie), accepting an invitation, resetting a password.",
	"CRMAdminService":         "Agencies, members, clients, API keys, prospects and deals.",
	"CollectionsAdminService": "Sites and their collections.",
	"DataAdminService":        "Dataset rows, written by an administrator.",
	"ActionsAdminService":     "Agencies' credits.",
	"AuditAdminService":       "Every tenant's audit trail.",
}

// prune drops the components no route refers to, directly or through
// others: the generator's well-known types, the bodies of routes the
// listener does not serve, the errors none of its routes gives.
func prune(doc document) {
	comp := doc["components"].(document)
	reached := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case document:
			if ref, ok := x["$ref"].(string); ok && !reached[ref] {
				reached[ref] = true
				if kind, name, ok := strings.Cut(strings.TrimPrefix(ref, "#/components/"), "/"); ok {
					walk(asDoc(comp[kind])[name])
				}
			}
			for _, v := range x {
				walk(v)
			}
		case []any:
			for _, v := range x {
				walk(v)
			}
		}
	}
	walk(doc["paths"])
	for _, kind := range []string{"schemas", "responses", "headers"} {
		for name := range asDoc(comp[kind]) {
			if !reached["#/components/"+kind+"/"+name] {
				delete(asDoc(comp[kind]), name)
			}
		}
	}
}
