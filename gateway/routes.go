package gateway

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/atrium-hq/atrium/gateway/internal/rest"
	"github.com/atrium-hq/atrium/platform/principal"
)

// route is one HTTP route the gateway serves: a method on a path template,
// the RPC it calls and the access rule that RPC declares. The table is read
// from the protobuf descriptors of the services the gateway registers, so
// the HTTP binding and the access rule each have one source: the proto.
type route struct {
	method   string // GET
	template string // /admin/v1/agencies/{agency_id}/prospects
	rpc      string // /atrium.crm.v1.CRMAdminService/CreateProspect
	access   principal.Access
	// name is the route as spans, metrics and the access log call it.
	name string // GET /admin/v1/agencies/{agency_id}/prospects
	// stats are its request metrics' attribute sets.
	stats *routeStats
	// query names the query parameters a route with a body takes: the
	// fields of its request that are neither its body field nor a path
	// variable (POST /api/v1/schedules?dry_run=true). grpc-gateway reads
	// them only when the body is one field, not "*".
	query map[string]bool
	// streaming routes read their bodies as they arrive (the upload) or
	// answer as a stream (the event stream), under their own rules for
	// query parameters and time.
	streaming bool
}

// routeTable finds a request's route from the pattern grpc-gateway matched.
type routeTable struct {
	byPattern map[string]map[string]*route // method, then grpc-gateway's rendering of the pattern
	all       []*route
	// methods says which methods each path takes, for 405 answers.
	methods rest.Routes
	// streamed are the streaming routes' "METHOD /path" (none has a path
	// variable), which serve recognises before routing, with the kind of
	// long request each is: a server stream (the event stream) or a
	// client stream (the upload).
	streamed map[string]longKind
}

// variable matches a path variable of an HTTP rule, {name} or {name=...}.
var variable = regexp.MustCompile(`\{([^}=]+)(=[^}]*)?\}`)

// add reads the routes of the service named service.
func (t *routeTable) add(service string) error {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(service))
	if err != nil {
		return fmt.Errorf("service %s: %w", service, err)
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return fmt.Errorf("%s is not a service", service)
	}
	if t.byPattern == nil {
		t.byPattern = map[string]map[string]*route{}
	}
	for i := range sd.Methods().Len() {
		md := sd.Methods().Get(i)
		rule, _ := proto.GetExtension(md.Options(), annotations.E_Http).(*annotations.HttpRule)
		method, path := httpBinding(rule)
		if method == "" {
			continue // not exposed over HTTP
		}
		access, ok := principal.MethodAccess(md)
		if !ok {
			return fmt.Errorf("%s/%s declares no access rule (atrium.access.v1.access)", service, md.Name())
		}
		r := &route{
			method:   method,
			template: variable.ReplaceAllString(path, "{$1}"),
			rpc:      "/" + service + "/" + string(md.Name()),
			access:   access,
			// A server stream (the event stream) is long-lived like an
			// upload: it takes no body and lives past the request deadline.
			streaming: md.IsStreamingClient() || md.IsStreamingServer(),
		}
		if r.streaming {
			if strings.Contains(path, "{") {
				return fmt.Errorf("%s/%s streams on a path with variables, which the gateway does not route", service, md.Name())
			}
			if t.streamed == nil {
				t.streamed = map[string]longKind{}
			}
			kind := kindStream
			if md.IsStreamingClient() {
				kind = kindUpload
			}
			t.streamed[method+" "+path] = kind
		}
		if body := rule.GetBody(); body != "" && body != "*" {
			for i := range md.Input().Fields().Len() {
				name := string(md.Input().Fields().Get(i).Name())
				if name != body && !strings.Contains(path, "{"+name) {
					if r.query == nil {
						r.query = map[string]bool{}
					}
					r.query[name] = true
				}
			}
		}
		r.name = r.method + " " + r.template
		// A refusal names the route the client called, not the RPC.
		r.access.Name = r.name
		// grpc-gateway renders a matched pattern's variables as {name=*}.
		if t.byPattern[method] == nil {
			t.byPattern[method] = map[string]*route{}
		}
		t.byPattern[method][variable.ReplaceAllString(path, "{$1=*}")] = r
		t.all = append(t.all, r)
		t.methods.Add(r.method, r.template)
	}
	return nil
}

func httpBinding(rule *annotations.HttpRule) (method, path string) {
	switch p := rule.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		return http.MethodGet, p.Get
	case *annotations.HttpRule_Post:
		return http.MethodPost, p.Post
	case *annotations.HttpRule_Put:
		return http.MethodPut, p.Put
	case *annotations.HttpRule_Patch:
		return http.MethodPatch, p.Patch
	case *annotations.HttpRule_Delete:
		return http.MethodDelete, p.Delete
	case *annotations.HttpRule_Custom:
		return p.Custom.GetKind(), p.Custom.GetPath()
	}
	return "", ""
}

// lookup returns the route grpc-gateway matched for method and pattern (its
// String()).
func (t *routeTable) lookup(method, pattern string) *route {
	return t.byPattern[method][pattern]
}

// takesQuery reports whether every parameter of q is one the route reads
// from the query beside its body.
func (r *route) takesQuery(q map[string][]string) bool {
	if len(r.query) == 0 {
		return false
	}
	for name := range q {
		if !r.query[name] {
			return false
		}
	}
	return true
}
