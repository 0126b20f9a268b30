package grpcserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/prefer"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/render"
	"github.com/atrium-hq/atrium/platform/value"
	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
)

// MaxWait is the longest Prefer: wait a request may ask for, in seconds.
const MaxWait = 60

// Retry-After of a 202 (when to look at the run) and of a full queue's
// 429, in seconds.
const (
	acceptedRetryAfter  = "1"
	queueFullRetryAfter = "5"
)

// waitMargin is kept of a request's deadline when it waits: the answer
// (a 202) must leave before the gateway gives up on it.
const waitMargin = 500 * time.Millisecond

// preference is what a Prefer header asks for (RFC 7240).
type preference struct {
	async bool
	wait  time.Duration
}

// parsePrefer reads the Prefer headers (RFC 7240, platform/prefer):
// respond-async and wait=N (1 to MaxWait seconds) are honoured, with any
// parameters (none is used) and in any case; other preferences are
// ignored, as RFC 7240 asks. A wait that is not such a number is a 400:
// the caller meant something it would not get.
func parsePrefer(values []string) (preference, error) {
	ps := prefer.Parse(values)
	p := preference{async: ps.Has("respond-async")}
	if w, ok := ps.Get("wait"); ok {
		n, err := strconv.Atoi(w.Value)
		if err != nil || n < 1 || n > MaxWait {
			return preference{}, apperr.Invalid("the Prefer header's wait must be a whole number of seconds from 1 to %d, such as wait=10; got %s", MaxWait, value.Describe(w.Value))
		}
		p.wait = time.Duration(n) * time.Second
	}
	return p, nil
}

// waitFor is how long a request may wait: what it asked, within its
// deadline.
func waitFor(ctx context.Context, asked time.Duration) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		asked = min(asked, time.Until(dl)-waitMargin)
	}
	return max(asked, 0)
}

// submit answers an asynchronous request: 202 with the run's URL, or,
// when the caller waited and the run finished in time (or a replayed run
// had finished), the run's outcome as a synchronous request gets it.
func (s *Server) submit(ctx context.Context, agency string, req *actionsv1.RunActionRequest, key string, pref preference) (*actionsv1.RunActionResponse, error) {
	out, err := s.actions.Submit(ctx, agency, req.GetParams().AsMap(), key)
	if err != nil {
		if apperr.KindOf(err) == apperr.KindExhausted {
			setBalance(ctx, out.Balance)
		}
		if e := (*apperr.Error)(nil); errors.As(err, &e) && e.Reason == apperr.ReasonQueueFull {
			_ = grpc.SetHeader(ctx, metadata.Pairs(headerRetryAfter, queueFullRetryAfter))
		}
		setRetryAfter(ctx, err)
		return nil, err
	}
	run, bal := out.Run, out.Balance
	waited := false
	if !run.Finished() && pref.wait > 0 {
		run, err = s.actions.WaitRun(ctx, agency, run.ID, waitFor(ctx, pref.wait))
		if err != nil {
			return nil, err
		}
		waited = true
		if run.Finished() {
			// Its outcome moved the balance (a refund on error).
			if bal, err = s.actions.OwnCredits(ctx, agency); err != nil {
				return nil, err
			}
		}
	}
	if out.Replayed {
		_ = grpc.SetHeader(ctx, metadata.Pairs(headerReplayed, "true"))
	}
	applied := make([]string, 0, 2)
	if pref.async || !run.Finished() {
		applied = append(applied, "respond-async")
	}
	if waited {
		applied = append(applied, fmt.Sprintf("wait=%d", int(pref.wait/time.Second)))
	}
	if run.Finished() {
		setBalance(ctx, bal)
		if waited {
			_ = grpc.SetHeader(ctx, metadata.Pairs(headerPrefApplied, strings.Join(applied[len(applied)-1:], ", ")))
		}
		return runResponse(ctx, run)
	}
	// The 202's headers and the balance in one metadata.
	url := "/api/v1/runs/" + run.ID
	_ = grpc.SetHeader(ctx, metadata.Pairs(headerAICredits, strconv.FormatInt(bal.AI, 10), headerDataCredits, strconv.FormatInt(bal.Data, 10),
		headerHTTPCode, strconv.Itoa(http.StatusAccepted), headerLocation, url,
		headerRetryAfter, acceptedRetryAfter, headerPrefApplied, strings.Join(applied, ", ")))
	accepted := app.Run{Action: run.Action, ClientID: run.ClientID, Status: app.StatusPending, StatusCode: http.StatusAccepted}
	if render.Requested(ctx) {
		return &actionsv1.RunActionResponse{RenderedJson: acceptedBody(accepted, run.ID, app.State(run), url)}, nil
	}
	accepted.Data = acceptedData(run.ID, app.State(run), url)
	return typedRun(accepted)
}

// acceptedData is the data of a 202: where the run is and how it stands.
func acceptedData(id, state, url string) map[string]any {
	return map[string]any{"run_id": id, "state": state, "url": url}
}

// acceptedBody is renderRun's body for a 202 (data as acceptedData says),
// written directly: marshalling the three-entry map cost 18 allocations
// per submission (every map key and value copied to be addressable).
// Keys in encoding/json's order for a map, sorted.
func acceptedBody(run app.Run, id, state, url string) []byte {
	w := render.NewWriter(224 + len(id) + len(url))
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
	w.Open()
	w.Key("run_id")
	w.String(id)
	w.Key("state")
	w.String(state)
	w.Key("url")
	w.String(url)
	w.Close()
	w.Close()
	return w.Bytes()
}

// runPB is a run as its resource shows it.
func runPB(r app.Run) (*actionsv1.Run, error) {
	out := &actionsv1.Run{
		Id: r.ID, Action: r.Action, ClientId: r.ClientID, State: app.State(r),
		StatusCode: int32(r.StatusCode), //nolint:gosec // G115: an HTTP status
		Credits: &actionsv1.RunCredits{
			Reserved: &actionsv1.CreditAmount{Ai: int32(r.Cost.AI), Data: int32(r.Cost.Data)}, //nolint:gosec // G115: the catalog's costs, a few credits
			Spent:    &actionsv1.CreditAmount{},
		},
		CreatedAt: timestamppb.New(r.CreatedAt),
	}
	if r.IdempotencyKey != "" {
		out.IdempotencyKey = wrapperspb.String(r.IdempotencyKey)
	}
	if r.ScheduleID != "" {
		out.ScheduleId = wrapperspb.String(r.ScheduleID)
	}
	if app.Started(r) {
		out.StartedAt = timestamppb.New(r.StartedAt)
	}
	if !r.Finished() {
		out.StatusCode = http.StatusAccepted
		return out, nil
	}
	out.FinishedAt = timestamppb.New(r.FinishedAt)
	if r.Status == app.StatusSuccess {
		out.Credits.Spent = out.Credits.Reserved
	}
	data, err := toStruct(r.Data)
	if err != nil {
		return nil, err
	}
	out.Data = data
	return out, nil
}

// GetRun implements actionsv1.ActionsServiceServer.
func (s *Server) GetRun(ctx context.Context, req *actionsv1.GetRunRequest) (*actionsv1.GetRunResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	pref, err := parsePrefer(md.Get(headerPrefer))
	if err != nil {
		return nil, err
	}
	agency := principal.AgencyID(ctx)
	var run app.Run
	if pref.wait > 0 {
		run, err = s.actions.WaitRun(ctx, agency, req.RunId, waitFor(ctx, pref.wait))
		if err == nil {
			_ = grpc.SetHeader(ctx, metadata.Pairs(headerPrefApplied, fmt.Sprintf("wait=%d", int(pref.wait/time.Second))))
		}
	} else {
		run, err = s.actions.GetRun(ctx, agency, req.RunId)
	}
	if err != nil {
		return nil, err
	}
	if !run.Finished() {
		_ = grpc.SetHeader(ctx, metadata.Pairs(headerRetryAfter, acceptedRetryAfter))
	}
	pb, err := runPB(run)
	if err != nil {
		return nil, err
	}
	return &actionsv1.GetRunResponse{Run: pb}, nil
}

// ListRuns implements actionsv1.ActionsServiceServer.
func (s *Server) ListRuns(ctx context.Context, req *actionsv1.ListRunsRequest) (*actionsv1.ListRunsResponse, error) {
	var before string
	params := []string{req.ClientId, req.State, req.Action}
	if req.ScheduleId != "" {
		// Only then, so that the cursors of pages without it stay as
		// they were.
		params = append(params, req.ScheduleId)
	}
	if req.Cursor != "" {
		pos, err := pagination.ReadCursor(req.Cursor, "the client_id, state, action and schedule_id", params...)
		if err != nil {
			return nil, err
		}
		if _, ok := value.ParseID(pos); !ok {
			return nil, apperr.Invalid("cursor is malformed: send back next_cursor exactly as received, or no cursor for the first page")
		}
		before = pos
	}
	page, err := s.actions.ListRuns(ctx, principal.AgencyID(ctx), req.ClientId, req.State, req.Action, req.ScheduleId, req.Limit, before)
	if err != nil {
		return nil, err
	}
	out := &actionsv1.ListRunsResponse{Runs: make([]*actionsv1.Run, 0, len(page.Runs))}
	for _, r := range page.Runs {
		pb, err := runPB(r)
		if err != nil {
			return nil, err
		}
		out.Runs = append(out.Runs, pb)
	}
	if page.Next != "" {
		next := pagination.Cursor(page.Next, params...)
		out.NextCursor = &next
	}
	return out, nil
}

// CancelRun implements actionsv1.ActionsServiceServer.
func (s *Server) CancelRun(ctx context.Context, req *actionsv1.CancelRunRequest) (*actionsv1.CancelRunResponse, error) {
	run, bal, err := s.actions.CancelRun(ctx, principal.AgencyID(ctx), req.RunId)
	if err != nil {
		return nil, err
	}
	setBalance(ctx, bal)
	pb, err := runPB(run)
	if err != nil {
		return nil, err
	}
	return &actionsv1.CancelRunResponse{Run: pb}, nil
}
