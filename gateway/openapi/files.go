package openapi

import (
	"github.com/atrium-hq/atrium/platform/publicfile"
)

// filesPath is the assets' files' route, which the gateway serves itself
// from the object store (no RPC: gateway/files.go).
const filesPath = "/files/{name}/{filename}"

// addFileRoutes documents the routes that answer files rather than JSON
// (an asset's file, an action's image), and the upload as the HTTP route
// takes it (the generator knows only the gRPC stream).
func addFileRoutes(doc document) {
	paths := doc["paths"].(document)
	if _, ok := paths["/api/public/v1/assets"]; ok {
		paths[filesPath] = document{"get": fileOperation("Files_Get", "AssetsService",
			"An asset's file, as its url gives it.",
			"Served without a key (the name is an unguessable capability), immutable, with ranges. "+
				"The Content-Type is the asset's; SVG files carry a Content-Security-Policy that blocks scripts.",
			[]any{
				document{"name": "name", "in": "path", "required": true, "description": "The capability: 32 hexadecimal digits and the file kind's extension.",
					"schema": document{"type": "string", "pattern": "^[0-9a-f]{32}\\.[a-z0-9]+$"}},
				document{"name": "filename", "in": "path", "required": true, "description": "The file name; any value serves the same file.",
					"schema": document{"type": "string"}},
			})}
		if post, ok := asDoc(paths["/api/public/v1/assets"])["post"].(document); ok {
			describeUpload(post)
		}
	}
	if item, ok := paths["/media/{name}"].(document); ok {
		params := asList(asDoc(item["get"])["parameters"])
		item["get"] = fileOperation("ActionsService_GetMedia", "ActionsService",
			"A file an action generated (a featured image).",
			"Served without a key: its name is an unguessable capability, so pages can embed it. Immutable, with ranges.",
			params)
	}
}

// fileOperation is a GET that answers a file: no key, any content type,
// and the answers of a file server.
func fileOperation(id, tag, summary, description string, params []any) document {
	errorBody := func(description string) document {
		return document{"description": description, "content": document{"application/json": document{"schema": document{"$ref": "#/components/schemas/Error"}}}}
	}
	file := func(description string) document {
		return document{
			"description": description,
			"headers": document{
				"ETag":          document{"schema": document{"type": "string"}, "description": "The file's version (it never changes)."},
				"Cache-Control": document{"schema": document{"type": "string"}, "description": "public, max-age=31536000, immutable"},
			},
			"content": document{"*/*": document{"schema": document{}}},
		}
	}
	return document{
		"operationId": id, "tags": []any{tag}, "summary": summary, "description": description,
		"security":      []any{},
		"parameters":    params,
		"x-atrium-file": true,
		"responses": document{
			"200": file("The file, with its Content-Type and X-Content-Type-Options: nosniff."),
			"206": file("The byte ranges the Range header asked for."),
			"304": document{"description": "The client's copy (If-None-Match) is the file."},
			"404": errorBody("No file at this address: deleted, or never given out."),
			"416": errorBody("The Range header asks for bytes beyond the file's end."),
			"503": errorBody("The object store is unavailable, or this gateway has none. Retry after the Retry-After header."),
		},
	}
}

// describeUpload documents the upload as the route takes it: a multipart
// form with the file and its alt text, or the raw file with its own
// Content-Type and ?filename= (and ?alt=).
func describeUpload(op document) {
	op["summary"] = "Upload a file."
	op["description"] = "Send multipart/form-data with a file part (its file name in Content-Disposition, its type as the part's Content-Type) and an optional alt field, before or after the file; " +
		"or the raw file as the body, with its own Content-Type and ?filename= (and ?alt=). The content must be the type declared (if any) and one of the allowed types. " +
		"The file is streamed, never held whole; see docs/assets.md."
	content := document{"multipart/form-data": document{
		"schema": document{
			"type":     "object",
			"required": []any{"file"},
			"properties": document{
				"file": document{"type": "string", "contentMediaType": "application/octet-stream", "description": "The file, with its file name."},
				"alt":  document{"type": "string", "maxLength": 1000, "description": "The text alternative of an image, at most 1,000 characters on one line."},
			},
		},
		"encoding": document{"file": document{"contentType": joinTypes(publicfile.Types())}},
	}}
	for _, t := range publicfile.Types() {
		content[t] = document{"schema": document{"type": "string", "contentMediaType": t}}
	}
	op["requestBody"] = document{"required": true, "content": content}
	op["parameters"] = []any{
		document{"name": "filename", "in": "query", "required": false, "description": "The raw form's file name (required with a raw body; refused with a multipart one).",
			"schema": document{"type": "string", "maxLength": 255}},
		document{"name": "alt", "in": "query", "required": false, "description": "The raw form's text alternative of an image, at most 1,000 characters on one line.",
			"schema": document{"type": "string", "maxLength": 1000}},
	}
	responses := op["responses"].(document)
	responses["413"] = document{"description": "The file is larger than the deployment's --max-asset-bytes (25 MiB by default).",
		"content": document{"application/json": document{"schema": document{"$ref": "#/components/schemas/Error"}}}}
	responses["408"] = document{"description": "The body stopped arriving for longer than the request timeout, or arrived slower than the deployment's minimum transfer rate once the request timeout had passed.",
		"content": document{"application/json": document{"schema": document{"$ref": "#/components/schemas/Error"}}}}
}

func joinTypes(ts []string) string {
	out := ""
	for i, t := range ts {
		if i > 0 {
			out += ", "
		}
		out += t
	}
	return out
}
