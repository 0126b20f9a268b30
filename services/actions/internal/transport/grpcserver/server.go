package grpcserver

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/render"
	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/catalog"
)

// Response header metadata, sent by the gateway as HTTP headers.
//
//nolint:gosec // G101: header names that mention credits, not credentials
const (
	headerAICredits   = "atrium-ai-credits-remaining"
	headerDataCredits = "atrium-data-credits-remaining"
	headerReplayed    = "idempotent-replayed"
	headerCache       = "cache-control"
	// The asynchronous answer's: its status (the gateway writes it), the
	// run's URL, when to look again, the preferences honoured.
	headerHTTPCode    = "x-http-code"
	headerLocation    = "location"
	headerRetryAfter  = "retry-after"
	headerPrefApplied = "preference-applied"
	// headerPrefer is the request metadata carrying Prefer.
	headerPrefer = "prefer"
	// idempotencyKey is the request metadata carrying Idempotency-Key.
	idempotencyKey = "idempotency-key"
)

// Server implements the actions gRPC services.
type Server struct {
	actionsv1.UnimplementedActionsServiceServer
	actionsv1.UnimplementedActionsAdminServiceServer
	actions *app.Actions
}

// NewServer returns a server over the use cases.
func NewServer(actions *app.Actions) *Server { return &Server{actions: actions} }

// Register registers the actions services on r.
func (s *Server) Register(r grpc.ServiceRegistrar) {
	actionsv1.RegisterActionsServiceServer(r, s)
	actionsv1.RegisterActionsAdminServiceServer(r, s)
	actionsv1.RegisterSchedulesServiceServer(r, &Schedules{actions: s.actions})
}

// setBalance sends the agency's balance with the response, success or
// error, so that a caller always knows what it has left.
func setBalance(ctx context.Context, b app.Balance) {
	_ = grpc.SetHeader(ctx, metadata.Pairs(headerAICredits, strconv.FormatInt(b.AI, 10), headerDataCredits, strconv.FormatInt(b.Data, 10)))
}

// setRetryAfter sends when to retry with an error that says (409 for a
// run still in flight with the request's Idempotency-Key): the gateway
// writes it as Retry-After, on errors as on successes.
func setRetryAfter(ctx context.Context, err error) {
	if d, ok := app.RetryAfter(err); ok {
		_ = grpc.SetHeader(ctx, metadata.Pairs(headerRetryAfter, strconv.FormatInt(int64(d/time.Second), 10)))
	}
}

// RunAction implements actionsv1.ActionsServiceServer.
func (s *Server) RunAction(ctx context.Context, req *actionsv1.RunActionRequest) (*actionsv1.RunActionResponse, error) {
	// The two values alone: FromIncomingContext would copy every key.
	var key string
	if v := metadata.ValueFromIncomingContext(ctx, idempotencyKey); len(v) > 0 {
		key = v[0]
	}
	pref, err := parsePrefer(metadata.ValueFromIncomingContext(ctx, headerPrefer))
	if err != nil {
		return nil, err
	}
	agency := principal.AgencyID(ctx)
	if pref.async || pref.wait > 0 {
		return s.submit(ctx, agency, req, key, pref)
	}
	out, err := s.actions.Run(ctx, agency, req.GetParams().AsMap(), key)
	if err != nil {
		if apperr.KindOf(err) == apperr.KindExhausted {
			setBalance(ctx, out.Balance)
		}
		setRetryAfter(ctx, err)
		return nil, err
	}
	setBalance(ctx, out.Balance)
	if out.Replayed {
		_ = grpc.SetHeader(ctx, metadata.Pairs(headerReplayed, "true"))
	}
	return runResponse(ctx, out.Run)
}

// runResponse is a finished run's answer, rendered when the gateway asks.
func runResponse(ctx context.Context, run app.Run) (*actionsv1.RunActionResponse, error) {
	if render.Requested(ctx) {
		body, err := renderRun(run)
		if err != nil {
			return nil, err
		}
		return &actionsv1.RunActionResponse{RenderedJson: body}, nil
	}
	return typedRun(run)
}

// typedRun is a run's response as a message, for gRPC callers.
func typedRun(run app.Run) (*actionsv1.RunActionResponse, error) {
	data, err := toStruct(run.Data)
	if err != nil {
		return nil, err
	}
	return &actionsv1.RunActionResponse{
		Action: run.Action, ClientId: run.ClientID, Status: run.Status,
		StatusCode: int32(run.StatusCode), Data: data, //nolint:gosec // G115: an HTTP status
	}, nil
}

// renderRun writes the HTTP body of a run's response once, its data
// straight from the record: a generated article is not converted to a
// Struct, sent as one and re-encoded by the gateway.
func renderRun(run app.Run) ([]byte, error) {
	data, err := render.Marshal(run.Data)
	if err != nil {
		return nil, err
	}
	w := render.NewWriter(len(data) + 160)
	w.Open()
	w.Key("action")
	w.String(run.Action)
	w.Key("client_id")
	w.String(run.ClientID)
	w.Key("status")
	w.String(run.Status)
	w.Key("status_code")
	w.Int(int64(run.StatusCode))
	w.Key("data")
	w.Raw(data)
	w.Close()
	return w.Bytes(), nil
}

// toStruct converts a record to a Struct; values structpb does not take
// directly (typed slices) go through JSON.
func toStruct(m map[string]any) (*structpb.Struct, error) {
	if st, err := structpb.NewStruct(m); err == nil {
		return st, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	st := &structpb.Struct{}
	return st, st.UnmarshalJSON(b)
}

// ListActions implements actionsv1.ActionsServiceServer.
func (s *Server) ListActions(context.Context, *actionsv1.ListActionsRequest) (*actionsv1.ListActionsResponse, error) {
	out := &actionsv1.ListActionsResponse{}
	for _, a := range catalog.All() {
		schema, err := structpb.NewStruct(catalog.InputSchema(a))
		if err != nil {
			return nil, err
		}
		pa := &actionsv1.Action{Name: a.Name, Description: a.Description, Writes: a.Writes, Refreshes: a.Refreshes,
			Cost:      &actionsv1.Cost{Ai: int32(a.Cost.AI), Data: int32(a.Cost.Data)}, //nolint:gosec // G115: the catalog's costs, a few credits
			Fields:    []*actionsv1.Field{},
			Execution: s.actions.Execution(), TypicalSeconds: s.actions.TypicalSeconds(a.Name, a.TypicalSeconds), InputSchema: schema}
		for _, f := range a.Fields {
			pf := &actionsv1.Field{Name: f.Name, Type: f.Type, Description: f.Description, Required: f.Required, AllowedValues: f.Enum}
			if pf.AllowedValues == nil {
				pf.AllowedValues = []string{}
			}
			if f.Format != "" {
				pf.Format = &f.Format
			}
			pf.Minimum, pf.Maximum = f.Min, f.Max
			if f.MaxLength > 0 {
				n := int32(f.MaxLength) //nolint:gosec // G115: a bound the catalog declares, thousands at most
				pf.MaxLength = &n
			}
			if f.MaxItems > 0 {
				n := int32(f.MaxItems) //nolint:gosec // G115: a bound the catalog declares, tens at most
				pf.MaxItems = &n
			}
			if f.Default != nil {
				v, err := structpb.NewValue(f.Default)
				if err != nil {
					return nil, err
				}
				pf.Default = v
			}
			pa.Fields = append(pa.Fields, pf)
		}
		out.Actions = append(out.Actions, pa)
	}
	return out, nil
}

func balancePB(b app.Balance) *actionsv1.Balance {
	return &actionsv1.Balance{Ai: int32(b.AI), Data: int32(b.Data)} //nolint:gosec // G115: a balance is at most app.MaxBalance, which fits
}

// GetCreditBalance implements actionsv1.ActionsServiceServer.
func (s *Server) GetCreditBalance(ctx context.Context, _ *actionsv1.GetCreditBalanceRequest) (*actionsv1.GetCreditBalanceResponse, error) {
	b, err := s.actions.OwnCredits(ctx, principal.AgencyID(ctx))
	if err != nil {
		return nil, err
	}
	setBalance(ctx, b)
	return &actionsv1.GetCreditBalanceResponse{Balance: balancePB(b)}, nil
}

// GetMedia implements actionsv1.ActionsServiceServer.
func (s *Server) GetMedia(ctx context.Context, req *actionsv1.GetMediaRequest) (*httpbody.HttpBody, error) {
	b, err := s.actions.Media(ctx, req.Name)
	if err != nil {
		return nil, err
	}
	// A name is never reused for other content.
	_ = grpc.SetHeader(ctx, metadata.Pairs(headerCache, "public, max-age=31536000, immutable"))
	return &httpbody.HttpBody{ContentType: b.ContentType, Data: b.Data}, nil
}

// AddCredits implements actionsv1.ActionsAdminServiceServer.
func (s *Server) AddCredits(ctx context.Context, req *actionsv1.AddCreditsRequest) (*actionsv1.AddCreditsResponse, error) {
	b, err := s.actions.AddCredits(ctx, req.AgencyId, int64(req.Ai), int64(req.Data))
	if err != nil {
		return nil, err
	}
	return &actionsv1.AddCreditsResponse{Balance: balancePB(b)}, nil
}

// GetCredits implements actionsv1.ActionsAdminServiceServer.
func (s *Server) GetCredits(ctx context.Context, req *actionsv1.GetCreditsRequest) (*actionsv1.GetCreditsResponse, error) {
	b, err := s.actions.Credits(ctx, req.AgencyId)
	if err != nil {
		return nil, err
	}
	return &actionsv1.GetCreditsResponse{Balance: balancePB(b)}, nil
}
