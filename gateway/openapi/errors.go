package openapi

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium/platform/principal"
	accessv1 "github.com/atrium-hq/atrium/proto/atrium/access/v1"
)

// errorResponses are the error answers, each a component every route that
// can give it refers to. The body is always {"error": "..."}.
var errorResponses = []struct {
	status      int
	name        string
	description string
	// retryAfter: the answer carries Retry-After.
	retryAfter bool
	example    string
}{
	{http.StatusBadRequest, "BadRequest", "A query parameter, path parameter, header or body field is invalid; the message names it and what is allowed. Nothing changed.", false,
		"limit must be an integer from 1 to 1000; got \"ten\""},
	{http.StatusUnauthorized, "Unauthorized", "", false, ""},
	{http.StatusPaymentRequired, "PaymentRequired", "The agency's credit balance is below what the action costs; nothing ran and nothing was spent.", false,
		"insufficient ai credits: generate_blog needs 2 ai credits (and 0 data), the agency has 1 available; an administrator adds credits with POST /admin/v1/agencies/{agency_id}/credits"},
	{http.StatusForbidden, "Forbidden", "The key lacks the scope this route needs (write for changes), or is not bound to what the route reads (a site's key, an agency's key).", false,
		"this route needs a key with the write scope; this key has: read"},
	{http.StatusNotFound, "NotFound", "The object named in the request does not exist, or is another tenant's.", false, "prospect 0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b not found"},
	{http.StatusConflict, "Conflict", "The request collides with the state of an object: the message says which and what to do.", false, ""},
	{http.StatusPreconditionFailed, "PreconditionFailed", "The If-Match header does not match the object's current ETag; nothing changed. Read it again and reapply the change.", false, ""},
	{http.StatusRequestEntityTooLarge, "TooLarge", "The request body is larger than the gateway's limit.", false, ""},
	{http.StatusUnprocessableEntity, "Unprocessable", "The request is well formed but cannot be done as sent: the message says why.", false, ""},
	{http.StatusTooManyRequests, "TooManyRequests", "The API key is over the deployment's rate limit (when one is set); for a long request (an event stream, an upload, a Prefer: wait), the key or its agency already holds as many open as it may; or, for an asynchronous action, its agency has as many runs queued as it may (nothing was reserved). Retry after the Retry-After header.", true, ""},
	{http.StatusInternalServerError, "Internal", "A fault; the message carries a reference to quote (the Atrium-Trace-Id header). Retry with backoff.", false,
		"internal error (reference 4bf92f3577b34da6a3ce929d0e0e4736)"},
	{http.StatusServiceUnavailable, "Unavailable", "A backing service is unavailable, a write collided with others and changed nothing, the server is at its limit of requests in flight (or of long requests), or it is shutting down. Retry after the Retry-After header.", true, ""},
	{http.StatusGatewayTimeout, "Timeout", "The request ran out of time. Retry with backoff (an action with the same Idempotency-Key).", false, ""},
}

func errorResponseName(status int) string {
	for _, e := range errorResponses {
		if e.status == status {
			return e.name
		}
	}
	panic(fmt.Sprintf("openapi: no error response for %d", status))
}

// addSharedComponents adds the error body, the error responses and the
// headers every route shares.
func addSharedComponents(doc document, l listener) {
	comp := doc["components"].(document)
	comp["schemas"].(document)["Error"] = document{
		"type":                 "object",
		"description":          "Every error answer's body.",
		"required":             []any{"error"},
		"additionalProperties": false,
		"properties": document{"error": document{
			"type": "string", "minLength": 1,
			"description": "What was wrong and what is allowed, in one sentence a person can act on.",
		}},
	}
	headers := comp["headers"].(document)
	headers["TraceId"] = document{
		"description": "The request's reference: its trace id (32 hexadecimal digits). Quote it when reporting a problem; a 500's message quotes the same.",
		"required":    true,
		"schema":      document{"type": "string", "pattern": "^[0-9a-f]{32}$"},
	}
	headers["RetryAfter"] = document{
		"description": "Seconds to wait before retrying.",
		"schema":      document{"type": "integer", "minimum": 0},
	}
	responses := comp["responses"].(document)
	for _, e := range errorResponses {
		desc := e.description
		if e.status == http.StatusUnauthorized {
			desc = "The admin token is missing or wrong."
			if l.tenant {
				desc = "The API key is missing, malformed, unknown, expired or revoked."
			}
		}
		h := document{"Atrium-Trace-Id": document{"$ref": "#/components/headers/TraceId"}}
		if e.retryAfter {
			h["Retry-After"] = document{"$ref": "#/components/headers/RetryAfter"}
		}
		media := document{"schema": document{"$ref": "#/components/schemas/Error"}}
		if e.example != "" {
			media["example"] = document{"error": e.example}
		}
		responses[e.name] = document{
			"description": desc,
			"headers":     h,
			"content":     document{"application/json": media},
		}
	}
}

// extras is what one operation answers or takes beyond the common rules
// of completeOperation: the errors its service can give, the headers it
// takes and sends.
type extras struct {
	errors          []int
	requestHeaders  []document
	responseHeaders document
	// accepted is the 202 an asynchronous request is answered with: the
	// 200's body schema, with the headers given here beside the others.
	accepted document
	// dryRun keeps a Create's 200, the answer of its ?dry_run=true, beside
	// its 201.
	dryRun bool
}

var (
	ifMatchHeader = document{
		"name": "If-Match", "in": "header", "required": false,
		"description": "Change the item only if its ETag (from GET or the last write) still matches; otherwise 412 and nothing changes. `*` matches any version.",
		"schema":      document{"type": "string", "examples": []any{`"3"`, "*"}},
	}
	idempotencyKeyHeader = document{
		"name": "Idempotency-Key", "in": "header", "required": false,
		"description": "A key of your choice (a UUID) that makes a retry safe: the same key with the same body within the retention answers the first run's outcome (with Idempotent-Replayed: true) and never runs the action twice; with another body, 422; while the first is still running, 409.",
		"schema":      document{"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[\\x20-\\x7e]+$"},
	}
	preferHeader = document{
		"name": "Prefer", "in": "header", "required": false,
		"description": "RFC 7240 preferences. On POST /api/v1/data: respond-async queues the run and answers 202 at once; wait=N (1 to 60) waits up to N seconds for the outcome (200) before answering 202. On GET /api/v1/runs/{run_id}: wait=N waits up to N seconds for the run to finish. Other preferences are ignored. Read as RFC 7240 writes it: names in any case, parameters after ;, several preferences in one header or in several Prefer headers, the first occurrence of a preference winning.",
		"schema":      document{"type": "string", "examples": []any{"respond-async", "respond-async, wait=10"}},
	}
	pollHeader = document{
		"description": "Seconds to wait before looking at the run again, while it is queued or running.",
		"schema":      document{"type": "integer", "minimum": 0},
	}
	preferenceAppliedHeader = document{
		"description": "The Prefer preferences honoured: respond-async, wait=N.",
		"schema":      document{"type": "string"},
	}
	acceptedHeaders = document{
		"Location": document{
			"description": "The run's resource, /api/v1/runs/{run_id}: GET it for the outcome.",
			"required":    true,
			"schema":      document{"type": "string"},
		},
		"Retry-After":        pollHeader,
		"Preference-Applied": preferenceAppliedHeader,
	}
	etagHeader = document{"ETag": document{
		"description": "The item's version, for If-Match.",
		"schema":      document{"type": "string"},
	}}
	creditHeaders = document{
		"Atrium-AI-Credits-Remaining": document{
			"description": "The agency's AI credits after this request.",
			"schema":      document{"type": "integer"},
		},
		"Atrium-Data-Credits-Remaining": document{
			"description": "The agency's data credits after this request.",
			"schema":      document{"type": "integer"},
		},
		"Idempotent-Replayed": document{
			"description": "true when the answer is the first run's, replayed for a repeated Idempotency-Key.",
			"schema":      document{"type": "string", "enum": []any{"true"}},
		},
		"Preference-Applied": preferenceAppliedHeader,
	}
	balanceHeaders = document{
		"Atrium-AI-Credits-Remaining":   creditHeaders["Atrium-AI-Credits-Remaining"],
		"Atrium-Data-Credits-Remaining": creditHeaders["Atrium-Data-Credits-Remaining"],
	}
)

// operationExtras are keyed by operationId; a test checks every key names
// an operation.
var operationExtras = map[string]extras{
	"ActionsService_RunAction": {
		errors:          []int{http.StatusPaymentRequired, http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity},
		requestHeaders:  []document{idempotencyKeyHeader, preferHeader},
		responseHeaders: creditHeaders,
		accepted:        acceptedHeaders,
	},
	"ActionsService_GetRun": {
		requestHeaders:  []document{preferHeader},
		responseHeaders: document{"Retry-After": pollHeader, "Preference-Applied": preferenceAppliedHeader},
	},
	"ActionsService_CancelRun":        {errors: []int{http.StatusConflict}, responseHeaders: balanceHeaders},
	"SchedulesService_CreateSchedule": {dryRun: true},
	"SchedulesService_PauseSchedule":  {errors: []int{http.StatusConflict}},
	"SchedulesService_TriggerSchedule": {
		errors: []int{http.StatusPaymentRequired}, responseHeaders: balanceHeaders, accepted: acceptedHeaders,
	},
	"CollectionsService_GetItem":    {responseHeaders: etagHeader},
	"CollectionsService_CreateItem": {responseHeaders: etagHeader},
	"CollectionsService_UpdateItem": {
		errors: []int{http.StatusPreconditionFailed}, requestHeaders: []document{ifMatchHeader}, responseHeaders: etagHeader,
	},
	"CollectionsService_DeleteItem": {errors: []int{http.StatusPreconditionFailed}, requestHeaders: []document{ifMatchHeader}},
	"CollectionsService_RestoreItemRevision": {
		errors:         []int{http.StatusPreconditionFailed, http.StatusConflict, http.StatusUnprocessableEntity},
		requestHeaders: []document{ifMatchHeader}, responseHeaders: etagHeader,
	},
	"CollectionsAdminService_CreateCollection": {errors: []int{http.StatusConflict}},
	// Items still hold values in a locale the change removes.
	"CollectionsAdminService_SetSiteLocales": {errors: []int{http.StatusConflict}},
	"SchemaService_CreateSchemaCollection":   {errors: []int{http.StatusConflict}},
	"CRMAdminService_CreateMember":           {errors: []int{http.StatusConflict}},
	"ActionsAdminService_AddCredits":         {errors: []int{http.StatusConflict}},
	"DataAdminService_CreateRows":            {errors: []int{http.StatusConflict}},
	"WebhooksService_CreateWebhook":          {errors: []int{http.StatusConflict}},
	"DataService_ReadDataset":                {errors: []int{http.StatusNotFound}},
	"PreviewLinksService_ListPreviewLinks":   {errors: []int{http.StatusNotFound}},
	"ReportsService_CreateShare":             {errors: []int{http.StatusNotFound}},
}

// completeOperation gives an operation its errors (each as the component
// of its status), its headers, 201 for a creation, and UUID ids in paths.
func completeOperation(l listener, path string, op document) error {
	responses := op["responses"].(document)
	id, _ := op["operationId"].(string)
	if _, rpc, _ := strings.Cut(id, "_"); strings.HasPrefix(rpc, "Create") {
		if ok, found := responses["200"]; found {
			delete(responses, "200")
			if operationExtras[id].dryRun {
				dry := maps.Clone(ok.(document))
				dry["description"] = "A dry run (?dry_run=true): the same body, and nothing created (a schedule's `id` is then empty)."
				responses["200"] = dry
			}
			ok.(document)["description"] = "Created."
			responses["201"] = ok
		}
	}
	if op["x-atrium-file"] == true {
		// A file the gateway serves itself: its answers are its own.
		delete(op, "x-atrium-file")
		addTraceHeader(responses)
		return nil
	}
	delete(responses, "default")
	statuses := []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusInternalServerError, http.StatusServiceUnavailable, http.StatusGatewayTimeout}
	if l.tenant {
		statuses = append(statuses, http.StatusForbidden, http.StatusTooManyRequests)
	}
	if strings.Contains(path, "{") {
		statuses = append(statuses, http.StatusNotFound)
	}
	if _, body := op["requestBody"]; body {
		statuses = append(statuses, http.StatusRequestEntityTooLarge)
	}
	x := operationExtras[id]
	statuses = append(statuses, x.errors...)
	for _, s := range statuses {
		code := strconv.Itoa(s)
		if _, own := responses[code]; !own {
			responses[code] = document{"$ref": "#/components/responses/" + errorResponseName(s)}
		}
	}
	if x.accepted != nil {
		// A 202 a catalog stated (the action request's) keeps its body;
		// otherwise the 202 answers the 200's.
		accepted, found := responses["202"].(document)
		if !found {
			ok, found := responses["200"].(document)
			if !found {
				return fmt.Errorf("operation %s has no 200 to answer 202 like", id)
			}
			accepted = maps.Clone(ok)
		}
		accepted["description"] = "Accepted: the run is queued or running (Prefer: respond-async, or a wait that ran out). Its body's data holds run_id, state and url; GET the Location for the outcome."
		h := maps.Clone(x.responseHeaders)
		maps.Copy(h, x.accepted)
		accepted["headers"] = h
		responses["202"] = accepted
	}
	for code, r := range responses {
		r := r.(document)
		if code == "202" && x.accepted != nil {
			continue
		}
		if _, ref := r["$ref"]; ref || !strings.HasPrefix(code, "2") {
			continue
		}
		h := asDoc(r["headers"])
		if h == nil {
			h = document{}
		}
		maps.Copy(h, x.responseHeaders)
		r["headers"] = h
	}
	addTraceHeader(responses)
	params := asList(op["parameters"])
	for _, h := range x.requestHeaders {
		params = append(params, maps.Clone(h))
	}
	for _, p := range params {
		if p := p.(document); p["in"] == "path" && isIDName(p["name"]) {
			s := p["schema"].(document)
			s["format"] = "uuid"
		}
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	return describeAccess(op, id)
}

// describeAccess states who may call the operation, from the access rule
// its RPC declares (the rule the gateway and the services judge by): the
// key's scope as the security requirement's, and its binding in words.
func describeAccess(op document, operationID string) error {
	md := methodOf(operationID)
	if md == nil {
		return fmt.Errorf("operation %s names no RPC", operationID)
	}
	a, ok := principal.MethodAccess(md)
	if !ok {
		return fmt.Errorf("%s declares no access rule", md.FullName())
	}
	var who string
	switch a.Caller {
	case accessv1.Caller_CALLER_ANYONE:
		op["security"] = []any{}
		return nil
	case accessv1.Caller_CALLER_ADMIN:
		return nil
	case accessv1.Caller_CALLER_PERSON:
		op["security"] = []any{document{"session": []any{}}}
		who = "Needs a signed-in person: the session cookie (an API key is refused with 403)."
	case accessv1.Caller_CALLER_TENANT:
		// A key or a signed-in person's cookie; only the cookie for the
		// people-only resources, which no key may touch.
		op["security"] = []any{document{"bearer": []any{string(a.Scope)}}, document{"session": []any{}}}
		who = fmt.Sprintf("Needs an API key with the %s scope, bound to %s, or a signed-in member's session cookie.", a.Scope, bindingWords[a.Binding])
		if principal.PeopleOnly(a.Resource) {
			op["security"] = []any{document{"session": []any{}}}
			who = "Needs a signed-in member's session cookie."
		}
		op["x-atrium-resource"] = string(a.Resource)
		who += " " + memberWords(a)
		if a.OpenToPublishedOnly {
			who += " A published_only key (the key a web page embeds) may call it too; drafts are hidden from it."
		} else {
			who += " A published_only key may not call it (403)."
		}
	default:
		return fmt.Errorf("%s is not callable over HTTP (%s)", md.FullName(), a.Caller)
	}
	if d, _ := op["description"].(string); d != "" {
		op["description"] = d + "\n\n" + who
	} else {
		op["description"] = who
	}
	return nil
}

// memberWords says which roles may call an operation (docs/people.md).
func memberWords(a principal.Access) string {
	var roles []string
	for _, r := range principal.Roles() {
		if r.Grants(a.Resource, a.Scope) && (r != principal.RoleClient || a.OpenToClient) {
			roles = append(roles, string(r))
		}
	}
	s := fmt.Sprintf("Its resource is %s (%s): ", a.Resource, a.Scope)
	if principal.PeopleOnly(a.Resource) {
		s = fmt.Sprintf("Its resource is %s (%s), which no API key may touch: ", a.Resource, a.Scope)
	}
	if len(roles) == 0 {
		return s + "no member's role allows it."
	}
	return s + "signed-in members with the role " + strings.Join(roles, ", ") + " may call it."
}

var bindingWords = map[principal.Binding]string{
	principal.BindingAgency:       "an agency",
	principal.BindingSite:         "a site",
	principal.BindingSiteOrAgency: "a site or an agency (each sees its own)",
}

// addTraceHeader declares Atrium-Trace-Id on every answer of its own
// (the error components declare it themselves).
func addTraceHeader(responses document) {
	for _, code := range slices.Sorted(maps.Keys(responses)) {
		r := responses[code].(document)
		if _, ref := r["$ref"]; ref {
			continue
		}
		h := asDoc(r["headers"])
		if h == nil {
			h = document{}
			r["headers"] = h
		}
		h["Atrium-Trace-Id"] = document{"$ref": "#/components/headers/TraceId"}
	}
}
