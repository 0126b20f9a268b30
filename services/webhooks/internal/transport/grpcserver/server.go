package grpcserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/value"
	webhooksv1 "github.com/atrium-hq/atrium/proto/atrium/webhooks/v1"
	"github.com/atrium-hq/atrium/services/webhooks/internal/app"
	"github.com/atrium-hq/atrium/services/webhooks/internal/eventtypes"
)

// Server implements webhooksv1.WebhooksService.
type Server struct {
	webhooksv1.UnimplementedWebhooksServiceServer

	endpoints *app.Endpoints
	log       *app.Log
	deliverer *app.Deliverer
	listen    *app.Listen
	// heartbeat is how often an idle event stream says it is alive.
	heartbeat time.Duration
	// draining is closed when the service begins to drain: the event
	// streams end then, or they would hold the graceful stop.
	draining <-chan struct{}
}

// DefaultHeartbeat is how often an idle event stream sends a heartbeat:
// under the minute proxies commonly close idle connections after.
const DefaultHeartbeat = 15 * time.Second

// WithEventStreams serves ListenEvents from listen until draining is
// closed.
func (s *Server) WithEventStreams(listen *app.Listen, heartbeat time.Duration, draining <-chan struct{}) *Server {
	if heartbeat <= 0 {
		heartbeat = DefaultHeartbeat
	}
	s.listen, s.heartbeat, s.draining = listen, heartbeat, draining
	return s
}

// NewServer returns a server over the use cases.
func NewServer(endpoints *app.Endpoints, log *app.Log, deliverer *app.Deliverer) *Server {
	return &Server{endpoints: endpoints, log: log, deliverer: deliverer}
}

// Register registers the service on r.
func (s *Server) Register(r grpc.ServiceRegistrar) { webhooksv1.RegisterWebhooksServiceServer(r, s) }

// owners are the tenants the caller acts for; the access rule
// (BINDING_SITE_OR_AGENCY) has made sure there is at least one.
func owners(ctx context.Context) app.Owners {
	p, _ := principal.FromContext(ctx)
	return app.OwnersOf(p.SiteID, p.AgencyID)
}

// CreateWebhook implements webhooksv1.WebhooksServiceServer.
func (s *Server) CreateWebhook(ctx context.Context, req *webhooksv1.CreateWebhookRequest) (*webhooksv1.CreateWebhookResponse, error) {
	t, err := owners(ctx).For(req.Events)
	if err != nil {
		return nil, err
	}
	e, err := s.endpoints.Create(ctx, t, app.NewEndpoint{URL: req.Url, Events: req.Events, Description: req.Description, Enabled: req.Enabled})
	if err != nil {
		return nil, err
	}
	return &webhooksv1.CreateWebhookResponse{Webhook: webhookPB(e, true)}, nil
}

// ListWebhooks implements webhooksv1.WebhooksServiceServer.
func (s *Server) ListWebhooks(ctx context.Context, _ *webhooksv1.ListWebhooksRequest) (*webhooksv1.ListWebhooksResponse, error) {
	eps, err := s.endpoints.ListAll(ctx, owners(ctx))
	if err != nil {
		return nil, err
	}
	out := &webhooksv1.ListWebhooksResponse{Webhooks: make([]*webhooksv1.Webhook, len(eps))}
	for i, e := range eps {
		out.Webhooks[i] = webhookPB(e, false)
	}
	return out, nil
}

// GetWebhook implements webhooksv1.WebhooksServiceServer.
func (s *Server) GetWebhook(ctx context.Context, req *webhooksv1.GetWebhookRequest) (*webhooksv1.GetWebhookResponse, error) {
	e, err := s.endpoints.Get(ctx, s.owner(ctx, req.Id), req.Id)
	if err != nil {
		return nil, err
	}
	return &webhooksv1.GetWebhookResponse{Webhook: webhookPB(e, false)}, nil
}

// UpdateWebhook implements webhooksv1.WebhooksServiceServer.
func (s *Server) UpdateWebhook(ctx context.Context, req *webhooksv1.UpdateWebhookRequest) (*webhooksv1.UpdateWebhookResponse, error) {
	c := app.EndpointChange{URL: req.Url, Description: req.Description, Enabled: req.Enabled}
	if req.Events != nil {
		c.Events = []string{}
		for i, v := range req.Events.Values {
			sv, ok := v.Kind.(*structpb.Value_StringValue)
			if !ok {
				return nil, apperr.Invalid("events[%d] must be a string: an event type, a prefix followed by .*, or *; got %s", i, value.Describe(v.AsInterface()))
			}
			c.Events = append(c.Events, sv.StringValue)
		}
	}
	e, err := s.endpoints.Update(ctx, s.owner(ctx, req.Id), req.Id, c)
	if err != nil {
		return nil, err
	}
	return &webhooksv1.UpdateWebhookResponse{Webhook: webhookPB(e, false)}, nil
}

// DeleteWebhook implements webhooksv1.WebhooksServiceServer.
func (s *Server) DeleteWebhook(ctx context.Context, req *webhooksv1.DeleteWebhookRequest) (*webhooksv1.DeleteWebhookResponse, error) {
	if err := s.endpoints.Delete(ctx, s.owner(ctx, req.Id), req.Id); err != nil {
		return nil, err
	}
	return &webhooksv1.DeleteWebhookResponse{Ok: true}, nil
}

// RotateWebhookSecret implements webhooksv1.WebhooksServiceServer.
func (s *Server) RotateWebhookSecret(ctx context.Context, req *webhooksv1.RotateWebhookSecretRequest) (*webhooksv1.RotateWebhookSecretResponse, error) {
	validity := app.MaxPreviousValidity
	if req.PreviousExpiresInSeconds != nil {
		validity = time.Duration(*req.PreviousExpiresInSeconds) * time.Second
	}
	e, err := s.endpoints.RotateSecret(ctx, s.owner(ctx, req.Id), req.Id, validity)
	if err != nil {
		return nil, err
	}
	return &webhooksv1.RotateWebhookSecretResponse{Webhook: webhookPB(e, true)}, nil
}

// TestWebhook implements webhooksv1.WebhooksServiceServer.
func (s *Server) TestWebhook(ctx context.Context, req *webhooksv1.TestWebhookRequest) (*webhooksv1.TestWebhookResponse, error) {
	d, err := s.deliverer.Test(ctx, s.owner(ctx, req.Id), req.Id)
	if err != nil {
		return nil, err
	}
	return &webhooksv1.TestWebhookResponse{Delivery: deliveryPB(d)}, nil
}

// ListDeliveries implements webhooksv1.WebhooksServiceServer.
func (s *Server) ListDeliveries(ctx context.Context, req *webhooksv1.ListDeliveriesRequest) (*webhooksv1.ListDeliveriesResponse, error) {
	page, err := s.log.List(ctx, s.owner(ctx, req.Id), req.Id, req.GetStatus(), req.Limit, req.Cursor)
	if err != nil {
		return nil, err
	}
	out := &webhooksv1.ListDeliveriesResponse{Deliveries: make([]*webhooksv1.Delivery, len(page.Deliveries))}
	for i, d := range page.Deliveries {
		out.Deliveries[i] = deliveryPB(d)
	}
	if page.Next != "" {
		out.NextCursor = &page.Next
	}
	return out, nil
}

// RetryDelivery implements webhooksv1.WebhooksServiceServer.
func (s *Server) RetryDelivery(ctx context.Context, req *webhooksv1.RetryDeliveryRequest) (*webhooksv1.RetryDeliveryResponse, error) {
	d, err := s.log.Retry(ctx, s.owner(ctx, req.Id), req.Id, req.DeliveryId)
	if err != nil {
		return nil, err
	}
	return &webhooksv1.RetryDeliveryResponse{Delivery: deliveryPB(d)}, nil
}

// RecoverDeliveries implements webhooksv1.WebhooksServiceServer.
func (s *Server) RecoverDeliveries(ctx context.Context, req *webhooksv1.RecoverDeliveriesRequest) (*webhooksv1.RecoverDeliveriesResponse, error) {
	n, err := s.log.Recover(ctx, s.owner(ctx, req.Id), req.Id, req.Since, req.Until)
	if err != nil {
		return nil, err
	}
	return &webhooksv1.RecoverDeliveriesResponse{Recovered: int32(min(n, 1<<31-1))}, nil //nolint:gosec // bounded just before
}

// ListEventTypes implements webhooksv1.WebhooksServiceServer.
func (s *Server) ListEventTypes(context.Context, *webhooksv1.ListEventTypesRequest) (*webhooksv1.ListEventTypesResponse, error) {
	out := &webhooksv1.ListEventTypesResponse{EventTypes: make([]*webhooksv1.EventType, len(eventtypes.All))}
	for i, t := range eventtypes.All {
		schema, err := structOf(t.Data)
		if err != nil {
			return nil, err
		}
		out.EventTypes[i] = &webhooksv1.EventType{Type: t.Name, Description: t.Description, Owner: string(t.Owner), Schema: schema}
	}
	return out, nil
}

// ListenEvents implements webhooksv1.WebhooksServiceServer: a heartbeat
// once the stream is live, then the caller's events as they come, and a
// heartbeat whenever none came for the heartbeat interval.
func (s *Server) ListenEvents(req *webhooksv1.ListenEventsRequest, stream grpc.ServerStreamingServer[webhooksv1.ListenEventsResponse]) error {
	if s.listen == nil {
		return errors.New("event streams are not served by this process") // a fault of the wiring: Internal
	}
	ctx := stream.Context()
	st, err := s.listen.Open(owners(ctx), req.Events)
	if err != nil {
		return err
	}
	defer st.Close()
	// The interceptor answers an error that is not the domain's as a
	// fault (Internal, logged): errors here are the domain's. A client gone
	// is no error at all.
	send := func(m *webhooksv1.ListenEventsResponse) error {
		if err := stream.Send(m); err != nil {
			if ctx.Err() != nil {
				return errClientGone
			}
			return apperr.Unavailable(err, "the event stream could not send to the gateway")
		}
		return nil
	}
	beat := func() error {
		return send(&webhooksv1.ListenEventsResponse{Kind: &webhooksv1.ListenEventsResponse_Heartbeat{Heartbeat: timestamppb.Now()}})
	}
	if err := beat(); err != nil {
		return goneIsNil(err)
	}
	ticker := time.NewTicker(s.heartbeat)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.draining:
			// The gateway opens the stream again on another replica.
			return apperr.Unavailable(nil, "the service is shutting down; open the event stream again")
		case <-st.Done:
			return apperr.QueueFull("the event stream was closed because its client fell behind: %v", st.Err())
		case <-ticker.C:
			if err := beat(); err != nil {
				return goneIsNil(err)
			}
		case ev := <-st.C:
			ok, err := st.Wanted(ctx, ev)
			if err != nil {
				return apperr.Unavailable(err, "the event stream cannot tell whose event %s is; open it again", ev.ID)
			}
			if !ok {
				continue
			}
			data, err := structpb.NewStruct(ev.Data)
			if err != nil {
				return fmt.Errorf("event %s: data: %w", ev.ID, err)
			}
			if err := send(&webhooksv1.ListenEventsResponse{Kind: &webhooksv1.ListenEventsResponse_Event{Event: &webhooksv1.WebhookEvent{
				Id: ev.ID, Type: ev.Type, Timestamp: timestamppb.New(ev.At), Data: data}}}); err != nil {
				return goneIsNil(err)
			}
			ticker.Reset(s.heartbeat)
		}
	}
}

// errClientGone is a send that failed because the client left.
var errClientGone = errors.New("the client left")

func goneIsNil(err error) error {
	if errors.Is(err, errClientGone) {
		return nil
	}
	return err
}

// owner is which of the caller's tenants owns webhook id.
func (s *Server) owner(ctx context.Context, id string) app.Tenant {
	return s.endpoints.Owner(ctx, owners(ctx), id)
}

func webhookPB(e app.Endpoint, withSecret bool) *webhooksv1.Webhook {
	w := &webhooksv1.Webhook{Id: e.ID, Url: e.URL, Events: e.Events, Description: e.Description, Enabled: e.Enabled,
		Owner: string(e.Tenant.Kind), CreatedAt: timestamppb.New(e.CreatedAt), UpdatedAt: timestamppb.New(e.UpdatedAt)}
	if withSecret {
		secret := e.Secret.String()
		w.Secret = &secret
	}
	if e.DisabledReason != "" {
		w.DisabledReason = wrapperspb.String(e.DisabledReason)
	}
	if !e.FailingSince.IsZero() {
		w.FailingSince = timestamppb.New(e.FailingSince)
	}
	if !e.Previous.IsZero() {
		w.PreviousSecretExpiresAt = timestamppb.New(e.PreviousUntil)
	}
	return w
}

func deliveryPB(d app.Delivery) *webhooksv1.Delivery {
	out := &webhooksv1.Delivery{Id: d.ID, EventId: d.EventID, EventType: d.EventType, Status: string(d.Status),
		Attempts: make([]*webhooksv1.Attempt, len(d.Attempts)), CreatedAt: timestamppb.New(d.CreatedAt)}
	for i, a := range d.Attempts {
		pa := &webhooksv1.Attempt{At: timestamppb.New(a.At), DurationMs: int32(min(a.Duration.Milliseconds(), 1<<31-1)), //nolint:gosec // bounded
			ResponseBody: a.ResponseBody}
		if a.StatusCode > 0 {
			pa.StatusCode = wrapperspb.Int32(int32(a.StatusCode)) //nolint:gosec // an HTTP status
		}
		if a.Error != "" {
			pa.Error = wrapperspb.String(a.Error)
		}
		out.Attempts[i] = pa
	}
	if d.Status == app.Pending {
		out.NextAttemptAt = timestamppb.New(d.NextAttemptAt)
	}
	var body map[string]any
	if json.Unmarshal(d.Body, &body) == nil {
		out.Payload, _ = structpb.NewStruct(body)
	}
	return out
}

// structOf converts a JSON Schema held as Go maps (with []string lists)
// into a Struct.
func structOf(m map[string]any) (*structpb.Struct, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	s := &structpb.Struct{}
	return s, s.UnmarshalJSON(b)
}
