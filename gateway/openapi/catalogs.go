package openapi

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The catalogs the services generate into catalog/: the data service's
// datasets (services/data/internal/app/openapi_catalog_test.go) and the
// actions service's actions (services/actions/internal/app/catalog). They
// are the same declarations the services validate with and discovery
// lists, so the document cannot say other than the API does.

type datasetsCatalog struct {
	Datasets []struct {
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Orders      []string `json:"orders"`
		Filters     []string `json:"filters"`
		Row         document `json:"row"`
		NewRow      document `json:"new_row"`
	} `json:"datasets"`
}

type actionsCatalog struct {
	Actions []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Cost        struct {
			AI   int64 `json:"ai"`
			Data int64 `json:"data"`
		} `json:"cost"`
		Writes      string   `json:"writes"`
		Refreshes   bool     `json:"refreshes"`
		InputSchema document `json:"input_schema"`
		Example     document `json:"example"`
	} `json:"actions"`
}

func (ac actionsCatalog) names() []any {
	out := make([]any, len(ac.Actions))
	for i, a := range ac.Actions {
		out[i] = a.Name
	}
	return out
}

func readCatalog(name string, v any) error {
	b, err := files.ReadFile("catalog/" + name)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("catalog/%s: %w", name, err)
	}
	return nil
}

// camel is a catalog name as a schema's: seo_tasks is SeoTasks.
func camel(name string) string {
	var b strings.Builder
	for _, w := range strings.Split(name, "_") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

func rowSchemaName(dataset string) string { return camel(dataset) + "Row" }

// addCatalogs states the rows of every dataset (the data read's, the
// admin write's) and the request and result of every action.
func addCatalogs(doc document, l listener) error {
	var ds datasetsCatalog
	if err := readCatalog("datasets.json", &ds); err != nil {
		return err
	}
	schemas := doc["components"].(document)["schemas"].(document)
	paths := doc["paths"].(document)
	var rows []any
	var names []any
	for _, d := range ds.Datasets {
		names = append(names, d.Name)
		if l.tenant {
			row := d.Row
			row["title"] = d.Name
			schemas[rowSchemaName(d.Name)] = row
		} else {
			row := d.NewRow
			row["title"] = d.Name
			schemas["New"+rowSchemaName(d.Name)] = row
		}
		rows = append(rows, document{"$ref": "#/components/schemas/" + rowName(l, d.Name)})
	}
	if l.tenant {
		read, ok := schemas["ReadDatasetResponse"].(document)
		if !ok {
			return fmt.Errorf("no ReadDatasetResponse schema")
		}
		data := read["properties"].(document)["data"].(document)
		data["items"] = document{"anyOf": rows, "description": "A row of the resource asked for: the schema named after it (keywords: KeywordsRow)."}
		op := asDoc(asDoc(paths["/api/v1/data"])["get"])
		for _, p := range asList(op["parameters"]) {
			p := p.(document)
			switch p["name"] {
			case "resource":
				p["required"] = true
				p["schema"].(document)["enum"] = names
			}
		}
		return addActions(doc)
	}
	if body, ok := schemas["DataAdminServiceCreateRowsBody"].(document); ok {
		r := asDoc(body["properties"])["rows"].(document)
		r["items"] = document{"anyOf": rows, "description": "A row of the resource named in the path: the schema named after it (keywords: NewKeywordsRow)."}
	}
	return nil
}

func rowName(l listener, dataset string) string {
	if l.tenant {
		return rowSchemaName(dataset)
	}
	return "New" + rowSchemaName(dataset)
}

// addActions makes the action request a oneOf of every action's request,
// discriminated by action, from the actions catalog; and the result a
// oneOf of every action's result, whose data is the record the action
// wrote (a row of its dataset).
func addActions(doc document) error {
	var ac actionsCatalog
	if err := readCatalog("actions.json", &ac); err != nil {
		return err
	}
	schemas := doc["components"].(document)["schemas"].(document)
	op := asDoc(asDoc(doc["paths"].(document)["/api/v1/data"])["post"])
	if op == nil {
		return fmt.Errorf("no POST /api/v1/data")
	}
	schemas["ActionError"] = document{
		"type":        "object",
		"description": "The data of an action that ended in error.",
		"required":    []any{"error"},
		"properties":  document{"error": document{"type": "string", "description": "What went wrong."}},
	}
	var requests, results []any
	mapping, resultMapping := document{}, document{}
	examples := document{}
	for _, a := range ac.Actions {
		req := a.InputSchema
		delete(req, "$schema")
		req["title"] = a.Name
		req["description"] = fmt.Sprintf("%s Costs %s.", a.Description, cost(a.Cost.AI, a.Cost.Data))
		name := camel(a.Name) + "Request"
		schemas[name] = req
		ref := "#/components/schemas/" + name
		requests = append(requests, document{"$ref": ref})
		mapping[a.Name] = ref
		if a.Example != nil {
			examples[a.Name] = document{"summary": a.Name, "value": a.Example}
		}

		resName := camel(a.Name) + "Result"
		schemas[resName] = actionResult(a.Name, a.Writes, schemas)
		resRef := "#/components/schemas/" + resName
		results = append(results, document{"$ref": resRef})
		resultMapping[a.Name] = resRef
	}
	body := asDoc(op["requestBody"])
	body["description"] = "The action, its client and the action's own fields at the top level: the schema named after the action (seo_audit: SeoAuditRequest). GET /api/v1/actions lists the same."
	media := asDoc(asDoc(body["content"])["application/json"])
	media["schema"] = document{"oneOf": requests, "discriminator": document{"propertyName": "action", "mapping": mapping}}
	media["examples"] = examples
	responses := asDoc(op["responses"])
	if ok := asDoc(responses["200"]); ok != nil {
		if media := asDoc(asDoc(ok["content"])["application/json"]); media != nil {
			media["schema"] = document{"oneOf": results, "discriminator": document{"propertyName": "action", "mapping": resultMapping}}
		}
	}
	// The 202 of an asynchronous request (Prefer: respond-async); its
	// headers are added with the operation's others (errors.go).
	schemas["ActionAccepted"] = actionAccepted(ac.names())
	responses["202"] = document{"content": document{"application/json": document{"schema": document{"$ref": "#/components/schemas/ActionAccepted"}}}}
	return nil
}

// actionAccepted is the 202 of an asynchronous request: the run to follow.
func actionAccepted(names []any) document {
	return document{
		"type":                 "object",
		"description":          "An action accepted to run later (Prefer: respond-async, or a wait that ran out): GET data.url (also the Location header) for its outcome.",
		"required":             []any{"action", "client_id", "status", "status_code", "data"},
		"additionalProperties": false,
		"properties": document{
			"action":      document{"type": "string", "enum": names},
			"client_id":   document{"type": "string", "format": "uuid"},
			"status":      document{"const": "pending", "description": "The run has not ended yet."},
			"status_code": document{"const": 202},
			"data": document{
				"type":                 "object",
				"required":             []any{"run_id", "state", "url"},
				"additionalProperties": false,
				"properties": document{
					"run_id": document{"type": "string", "format": "uuid"},
					"state":  document{"type": "string", "enum": []any{"queued", "running"}, "description": "Where the run is: queued (waiting for a worker) or running."},
					"url":    document{"type": "string", "description": "The run resource, /api/v1/runs/{run_id}."},
				},
			},
		},
	}
}

// actionResult is the answer of one action: on success its data is the
// record it wrote, on error {"error": "..."}. The record is the row it
// wrote to its dataset as the action built it, before the data service
// stamps created_at and updated_at, with the model that generated it for
// generated content; a few actions answer a summary of what they wrote
// instead (fetch_backlinks, deploy_blog, index_url, send_prospect_email:
// docs/actions.md). So the data schema types every field it shares with
// the dataset's row and leaves the rest open, rather than claim a shape
// some actions do not answer.
func actionResult(name, writes string, schemas document) document {
	props := document{"model": document{"type": "string", "description": "The model or generator that produced the content, for generated content."}}
	if row, ok := schemas[rowSchemaName(writes)].(document); ok {
		for k, v := range asDoc(row["properties"]) {
			props[k] = v
		}
	}
	return document{
		"type":                 "object",
		"title":                name + " result",
		"required":             []any{"action", "client_id", "status", "status_code", "data"},
		"additionalProperties": false,
		"properties": document{
			"action":      document{"const": name},
			"client_id":   document{"type": "string", "format": "uuid"},
			"status":      document{"type": "string", "enum": []any{"success", "error"}, "description": "The outcome of the work, separate from the HTTP status."},
			"status_code": document{"type": "integer", "description": "HTTP-style status of the underlying provider or generator."},
			"data": document{
				"description": "On success the record the action wrote (mostly a row of " + writes + " as GET /api/v1/data?resource=" + writes + " returns it, before created_at and updated_at are stamped); on error {\"error\": \"...\"}.",
				"anyOf": []any{
					document{"type": "object", "properties": props, "additionalProperties": true},
					document{"$ref": "#/components/schemas/ActionError"},
				},
			},
		},
	}
}

func cost(ai, data int64) string {
	switch {
	case ai == 0 && data == 0:
		return "no credits"
	case data == 0:
		return fmt.Sprintf("%d AI credit%s", ai, plural(ai))
	case ai == 0:
		return fmt.Sprintf("%d data credit%s", data, plural(data))
	}
	return fmt.Sprintf("%d AI and %d data credit%s", ai, data, plural(data))
}

func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}
