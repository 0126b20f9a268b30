package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/gateway/internal/rest"
	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/value"
	webhooksv1 "github.com/atrium-hq/atrium/proto/atrium/webhooks/v1"
)

// The event stream (GET /api/v1/event-stream, ListenEvents) is answered
// here rather than by grpc-gateway's generated handler, which would answer
// an error before the first line as {"error": {"code", "message",
// "details"}} with a status of its own mapping, and holds no write
// deadline. Here an error before the stream begins (a bad filter: 400) is
// the same {"error": message} as every other route's, and a stream under
// way is newline-delimited JSON, {"result": ...} per line, flushed line by
// line, ended by an {"error": message} line when it fails. The route is the
// proto's, so the route middleware has authenticated the key and applied
// the access rule before this runs; the route is "streamed" (routes.go),
// so the request deadline does not end it.

const (
	eventStreamRPC  = "/atrium.webhooks.v1.WebhooksService/ListenEvents"
	eventStreamPath = "/api/v1/event-stream"
)

// eventStream returns the event stream's handler on mux, calling client.
func (g *Gateway) eventStream(mux *runtime.ServeMux, client webhooksv1.WebhooksServiceClient) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
		ctx := r.Context()
		fail := func(err error) { rest.WriteError(ctx, g.cfg.Logger, w, r, err) }
		q := r.URL.Query()
		for k := range q {
			if k != "events" {
				fail(status.Errorf(codes.InvalidArgument, "unknown query parameter %q; %s takes only events: event types, prefixes followed by .*, or *, comma-separated (?events=item.*,action_run.*)", k, eventStreamPath))
				return
			}
		}
		// A value that is not UTF-8 cannot travel as a protobuf string (it
		// failed on its way, a 500): refused here, naming the parameter.
		for _, v := range q["events"] {
			if err := value.UTF8("query parameter events (once percent-decoded)", v); err != nil {
				fail(apperr.ToStatus(err).Err())
				return
			}
		}
		events := splitEvents(q["events"])
		actx, err := runtime.AnnotateContext(ctx, mux, r, eventStreamRPC, runtime.WithHTTPPathPattern(eventStreamPath))
		if err != nil {
			fail(err)
			return
		}
		sctx, cancel := context.WithCancelCause(actx)
		defer cancel(nil)
		go func() {
			select {
			case <-g.streamsEnd:
				cancel(rest.ErrShuttingDown)
			case <-sctx.Done():
			}
		}()
		stream, err := client.ListenEvents(sctx, &webhooksv1.ListenEventsRequest{Events: events})
		if err != nil {
			fail(err)
			return
		}
		// The service validates the filter and subscribes before its first
		// message (a heartbeat): an error now is the whole answer.
		msg, err := stream.Recv()
		if err != nil {
			fail(err)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/x-ndjson")
		h.Set("Cache-Control", "no-store")
		// nginx would otherwise buffer the stream.
		h.Set("X-Accel-Buffering", "no")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		marshaler := rest.Marshaler()
		var line bytes.Buffer
		for {
			b, err := marshaler.Marshal(msg)
			if err != nil {
				g.writeStreamError(ctx, w, rc, r, status.Errorf(codes.Internal, "marshal an event stream line: %v", err))
				return
			}
			line.Reset()
			line.WriteString(`{"result":`)
			line.Write(b)
			line.WriteString("}\n")
			// A client that does not take a line within the request timeout
			// is cut, so that it holds neither the gateway nor the service
			// (whose own buffer is bounded too).
			_ = rc.SetWriteDeadline(time.Now().Add(g.cfg.RequestTimeout))
			if _, err := w.Write(line.Bytes()); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
			msg, err = stream.Recv()
			if status.Code(err) == codes.Unavailable && sctx.Err() == nil {
				// The service's connection reached its age (rpc.MaxConnectionAge)
				// or the replica is draining: the stream goes on from another
				// connection, the client seeing no break. Its first message is
				// a heartbeat, which is passed on like any.
				if stream, err = client.ListenEvents(sctx, &webhooksv1.ListenEventsRequest{Events: events}); err == nil {
					msg, err = stream.Recv()
				}
			}
			if err != nil {
				if errors.Is(context.Cause(sctx), rest.ErrShuttingDown) {
					g.writeStreamError(ctx, w, rc, r, status.Error(codes.Unavailable, "the server is shutting down; open the event stream again"))
					return
				}
				if errors.Is(err, io.EOF) || ctx.Err() != nil {
					return
				}
				g.writeStreamError(ctx, w, rc, r, err)
				return
			}
		}
	}
}

// writeStreamError writes the last line of a stream that failed.
func (g *Gateway) writeStreamError(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController, r *http.Request, err error) {
	_, msg := rest.Describe(ctx, g.cfg.Logger, r, err)
	b, merr := jsonLine(rest.Body{Error: msg})
	if merr != nil {
		return
	}
	_ = rc.SetWriteDeadline(time.Now().Add(g.cfg.RequestTimeout))
	if _, werr := w.Write(b); werr == nil {
		_ = rc.Flush()
	}
}

// jsonLine is v as one line of JSON (Encode ends it with a newline).
func jsonLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// splitEvents reads the events query parameter, given once with commas
// (?events=item.*,action_run.*) or several times, as the request's list of
// patterns: one entry per name, so that the list's maximum (the proto's
// max_items, which the service's server checks) counts names.
func splitEvents(values []string) []string {
	var out []string
	for _, v := range values {
		for p := range strings.SplitSeq(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}
