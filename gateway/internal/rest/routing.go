package rest

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Routes is the table of path templates and their methods, used to say
// which methods a path allows. grpc-gateway knows this but does not tell.
type Routes struct {
	templates []route
}

type route struct {
	segments []string // "{name}" matches any one segment
	methods  []string
}

// Add registers method on a path template such as /api/v1/items/{id}.
func (rt *Routes) Add(method, template string) {
	segs := strings.Split(strings.Trim(template, "/"), "/")
	for i := range rt.templates {
		if slices.Equal(rt.templates[i].segments, segs) {
			if !slices.Contains(rt.templates[i].methods, method) {
				rt.templates[i].methods = append(rt.templates[i].methods, method)
				slices.Sort(rt.templates[i].methods)
			}
			return
		}
	}
	rt.templates = append(rt.templates, route{segments: segs, methods: []string{method}})
}

// Allowed returns the methods registered for path.
func (rt *Routes) Allowed(path string) []string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var out []string
	for _, r := range rt.templates {
		if len(r.segments) != len(segs) {
			continue
		}
		match := true
		for i, s := range r.segments {
			if !(strings.HasPrefix(s, "{") && segs[i] != "") && s != segs[i] {
				match = false
				break
			}
		}
		if match {
			out = append(out, r.methods...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// RoutingErrorHandler answers requests no route takes: 404 for an unknown
// path, 405 with an Allow header for a known path and the wrong method.
func RoutingErrorHandler(logger *slog.Logger, routes *Routes) runtime.RoutingErrorHandlerFunc {
	return func(ctx context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, code int) {
		var err error
		switch code {
		case http.StatusMethodNotAllowed:
			allowed := routes.Allowed(r.URL.Path)
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			writeJSON(w, code, Body{Error: fmt.Sprintf("method %s is not allowed on %s; allowed: %s",
				r.Method, r.URL.Path, strings.Join(allowed, ", "))})
			return
		case http.StatusNotFound:
			writeJSON(w, code, Body{Error: fmt.Sprintf("no route for %s %s; the routes are listed at /openapi.json", r.Method, r.URL.Path)})
			return
		case http.StatusBadRequest:
			err = status.Error(codes.InvalidArgument, "malformed request path: it must start with /")
		default:
			err = status.Errorf(codes.Internal, "routing error %d", code)
		}
		WriteError(ctx, logger, w, r, err)
	}
}
