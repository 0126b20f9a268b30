package openapi

// realtimePath is the live updates' route, which the gateway serves
// itself (no RPC: gateway/realtime.go, docs/realtime.md).
const realtimePath = "/api/public/v1/realtime"

// addRealtimeRoutes documents the realtime stream and its subscription,
// next to the collections' routes they carry.
func addRealtimeRoutes(doc document) {
	paths := doc["paths"].(document)
	if _, ok := paths["/api/public/v1/collections"]; !ok {
		return
	}
	errRef := func(name string) document { return document{"$ref": "#/components/responses/" + name} }
	paths[realtimePath] = document{
		"get": document{
			"operationId": "Realtime_Stream", "tags": []any{"CollectionsService"},
			"summary": "Open a stream of live updates (server-sent events).",
			"description": "No key: a page opens it with a plain EventSource. The first event is `event: connect` with `data: {\"client_id\"}`; " +
				"set what the stream receives with POST " + realtimePath + ". Then one event per change of a subscribed collection, item or asset: " +
				"`event: <collection>` (or `assets`), `id: <event id>`, `data: {\"action\": \"create\"|\"update\"|\"delete\", \"collection\", \"item\"}`, " +
				"the item as the subscribing key reads it (a published-only key never sees a draft; an unpublished item arrives as a delete). " +
				"Comment lines (`: ping`) keep it open. Send Last-Event-ID to resume after a disconnect; when the events since are no longer kept, " +
				"the stream says `event: reset` (refetch). A stream without subscriptions ends after 5 minutes. See docs/realtime.md.",
			"security": []any{},
			"parameters": []any{
				document{"name": "Last-Event-ID", "in": "header", "required": false,
					"description": "The id of the last event received (EventSource sends it when it reconnects): the stream resumes after it.",
					"schema":      document{"type": "string", "pattern": "^[0-9]+$"}},
			},
			"x-atrium-file": true,
			"responses": document{
				"200": document{
					"description": "The stream (text/event-stream), until the client closes it.",
					"content":     document{"text/event-stream": document{"schema": document{"type": "string"}}},
				},
				"400": errRef("BadRequest"),
				"503": errRef("Unavailable"),
			},
		},
		"post": document{
			"operationId": "Realtime_Subscribe", "tags": []any{"CollectionsService"},
			"summary": "Set what a realtime stream receives.",
			"description": "Replaces the stream's subscriptions (an empty list unsubscribes from everything): \"<collection>\" for every item of a collection, " +
				"\"<collection>/<item_id>\" for one item, \"assets\" (or \"assets/<asset_id>\") for the site's assets; at most 100. " +
				"The first key that subscribes a stream binds it: a later request with another key is 403. Any key that may read the site's content, published-only keys included.",
			"requestBody": document{"required": true, "content": document{"application/json": document{"schema": document{
				"type": "object", "required": []any{"client_id", "subscriptions"}, "additionalProperties": false,
				"properties": document{
					"client_id":     document{"type": "string", "description": "The client_id of the stream's connect event."},
					"subscriptions": document{"type": "array", "maxItems": 100, "items": document{"type": "string"}},
				},
			}}}},
			"x-atrium-file": true,
			"responses": document{
				"204": document{"description": "The stream receives these from now on."},
				"400": errRef("BadRequest"),
				"401": errRef("Unauthorized"),
				"403": errRef("Forbidden"),
				"404": errRef("NotFound"),
				"413": errRef("TooLarge"),
				"429": errRef("TooManyRequests"),
				"500": errRef("Internal"),
				"503": errRef("Unavailable"),
			},
		},
	}
}
