package grpcserver

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/value"
	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
)

// Schedules is the SchedulesService over the same use cases.
type Schedules struct {
	actionsv1.UnimplementedSchedulesServiceServer
	actions *app.Actions
}

// input is a request's schedule as the use cases take it.
func input(in *actionsv1.ScheduleInput) app.ScheduleInput {
	var out app.ScheduleInput
	if in == nil {
		return out
	}
	out.Action, out.ClientID, out.Cron, out.Every, out.At, out.Weekday, out.Timezone, out.Description =
		in.Action, in.ClientId, in.Cron, in.Every, in.At, in.Weekday, in.Timezone, in.Description
	if in.Params != nil {
		out.Params = in.Params.AsMap()
	}
	if in.Monthday != nil {
		n := int(*in.Monthday)
		out.Monthday = &n
	}
	if in.PauseAfterFailures != nil {
		n := int(*in.PauseAfterFailures)
		out.PauseAfter = &n
	}
	if in.StartsAt != nil {
		t := in.StartsAt.AsTime()
		out.StartsAt = &t
	}
	if in.EndsAt != nil {
		t := in.EndsAt.AsTime()
		out.EndsAt = &t
	}
	if in.MaxCreditsPerMonth != nil {
		out.MaxPerMonth = &app.Balance{AI: int64(in.MaxCreditsPerMonth.Ai), Data: int64(in.MaxCreditsPerMonth.Data)}
	}
	return out
}

func amount(b app.Balance) *actionsv1.CreditAmount {
	return &actionsv1.CreditAmount{Ai: int32(min(b.AI, app.MaxBalance)), Data: int32(min(b.Data, app.MaxBalance))} //nolint:gosec // G115: bounded by MaxBalance, which fits
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func stamp(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

// schedulePB is a schedule as its resource shows it.
func schedulePB(v app.ScheduleView) (*actionsv1.Schedule, error) {
	params, err := structpb.NewStruct(v.Params)
	if err != nil {
		params, err = toStruct(v.Params)
		if err != nil {
			return nil, err
		}
	}
	tm := v.Timing
	out := &actionsv1.Schedule{
		Id: v.ID, Action: v.Action, ClientId: v.ClientID, Params: params,
		Cron: optString(tm.Cron), Every: optString(tm.Every), At: optString(tm.At), Weekday: optString(tm.Weekday),
		Timezone: tm.Timezone, StartsAt: stamp(tm.StartsAt), EndsAt: stamp(tm.EndsAt),
		PauseAfterFailures: int32(v.PauseAfter), Description: v.Description, State: v.State, //nolint:gosec // G115: at most app.MaxPauseAfter
		NextRunAt: stamp(v.NextRunAt), NextRuns: []*timestamppb.Timestamp{},
		EstimatedCredits: &actionsv1.ScheduleCredits{PerRun: amount(v.PerRun), PerMonth: amount(v.PerMonth)},
		Failures:         int32(v.Failures), LastRunId: optString(v.LastRunID), Slots: []*actionsv1.ScheduleSlot{}, //nolint:gosec // G115: bounded by pause_after_failures
		CreatedAt: stamp(v.CreatedAt), UpdatedAt: stamp(v.UpdatedAt),
	}
	if tm.Monthday != 0 {
		n := int32(tm.Monthday) //nolint:gosec // G115: 1 to 28
		out.Monthday = &n
	}
	if v.MaxPerMonth != nil {
		out.MaxCreditsPerMonth = amount(*v.MaxPerMonth)
	}
	for _, t := range v.NextRuns {
		out.NextRuns = append(out.NextRuns, timestamppb.New(t))
	}
	for _, sl := range v.Slots {
		out.Slots = append(out.Slots, &actionsv1.ScheduleSlot{Slot: stamp(sl.Slot), Outcome: sl.Outcome, RunId: optString(sl.RunID),
			Reason: optString(sl.Reason), At: stamp(sl.At)})
	}
	return out, nil
}

// CreateSchedule implements actionsv1.SchedulesServiceServer.
func (s *Schedules) CreateSchedule(ctx context.Context, req *actionsv1.CreateScheduleRequest) (*actionsv1.CreateScheduleResponse, error) {
	if req.Schedule == nil {
		return nil, apperr.Invalid("the body must be a schedule: {\"action\", \"client_id\", \"params\", \"cron\" or \"every\" with \"at\", \"timezone\", ...}")
	}
	v, err := s.actions.CreateSchedule(ctx, principal.AgencyID(ctx), input(req.Schedule), req.DryRun)
	if err != nil {
		return nil, err
	}
	if req.DryRun {
		// Nothing was created: 200, not the 201 of a Create.
		_ = grpc.SetHeader(ctx, metadata.Pairs(headerHTTPCode, strconv.Itoa(http.StatusOK)))
	}
	pb, err := schedulePB(v)
	return &actionsv1.CreateScheduleResponse{Schedule: pb}, err
}

// ListSchedules implements actionsv1.SchedulesServiceServer.
func (s *Schedules) ListSchedules(ctx context.Context, req *actionsv1.ListSchedulesRequest) (*actionsv1.ListSchedulesResponse, error) {
	var after string
	params := []string{req.ClientId, req.Action, req.State}
	if req.Cursor != "" {
		pos, err := pagination.ReadCursor(req.Cursor, "the client_id, action and state", params...)
		if err != nil {
			return nil, err
		}
		if _, ok := value.ParseID(pos); !ok {
			return nil, apperr.Invalid("cursor is malformed: send back next_cursor exactly as received, or no cursor for the first page")
		}
		after = pos
	}
	page, err := s.actions.ListSchedules(ctx, principal.AgencyID(ctx), req.ClientId, req.Action, req.State, req.Limit, after)
	if err != nil {
		return nil, err
	}
	out := &actionsv1.ListSchedulesResponse{Schedules: make([]*actionsv1.Schedule, 0, len(page.Schedules))}
	for _, v := range page.Schedules {
		pb, err := schedulePB(v)
		if err != nil {
			return nil, err
		}
		out.Schedules = append(out.Schedules, pb)
	}
	if page.Next != "" {
		next := pagination.Cursor(page.Next, params...)
		out.NextCursor = &next
	}
	return out, nil
}

// GetSchedule implements actionsv1.SchedulesServiceServer.
func (s *Schedules) GetSchedule(ctx context.Context, req *actionsv1.GetScheduleRequest) (*actionsv1.GetScheduleResponse, error) {
	v, err := s.actions.GetSchedule(ctx, principal.AgencyID(ctx), req.ScheduleId)
	if err != nil {
		return nil, err
	}
	pb, err := schedulePB(v)
	return &actionsv1.GetScheduleResponse{Schedule: pb}, err
}

// UpdateSchedule implements actionsv1.SchedulesServiceServer.
func (s *Schedules) UpdateSchedule(ctx context.Context, req *actionsv1.UpdateScheduleRequest) (*actionsv1.UpdateScheduleResponse, error) {
	v, err := s.actions.UpdateSchedule(ctx, principal.AgencyID(ctx), req.ScheduleId, input(req.Schedule))
	if err != nil {
		return nil, err
	}
	pb, err := schedulePB(v)
	return &actionsv1.UpdateScheduleResponse{Schedule: pb}, err
}

// DeleteSchedule implements actionsv1.SchedulesServiceServer.
func (s *Schedules) DeleteSchedule(ctx context.Context, req *actionsv1.DeleteScheduleRequest) (*actionsv1.DeleteScheduleResponse, error) {
	return &actionsv1.DeleteScheduleResponse{}, s.actions.DeleteSchedule(ctx, principal.AgencyID(ctx), req.ScheduleId)
}

// PauseSchedule implements actionsv1.SchedulesServiceServer.
func (s *Schedules) PauseSchedule(ctx context.Context, req *actionsv1.PauseScheduleRequest) (*actionsv1.PauseScheduleResponse, error) {
	v, err := s.actions.PauseSchedule(ctx, principal.AgencyID(ctx), req.ScheduleId)
	if err != nil {
		return nil, err
	}
	pb, err := schedulePB(v)
	return &actionsv1.PauseScheduleResponse{Schedule: pb}, err
}

// ResumeSchedule implements actionsv1.SchedulesServiceServer.
func (s *Schedules) ResumeSchedule(ctx context.Context, req *actionsv1.ResumeScheduleRequest) (*actionsv1.ResumeScheduleResponse, error) {
	v, err := s.actions.ResumeSchedule(ctx, principal.AgencyID(ctx), req.ScheduleId)
	if err != nil {
		return nil, err
	}
	pb, err := schedulePB(v)
	return &actionsv1.ResumeScheduleResponse{Schedule: pb}, err
}

// TriggerSchedule implements actionsv1.SchedulesServiceServer: 202 with
// the queued run and its URL.
func (s *Schedules) TriggerSchedule(ctx context.Context, req *actionsv1.TriggerScheduleRequest) (*actionsv1.TriggerScheduleResponse, error) {
	out, err := s.actions.TriggerSchedule(ctx, principal.AgencyID(ctx), req.ScheduleId)
	if err != nil {
		if apperr.KindOf(err) == apperr.KindExhausted {
			setBalance(ctx, out.Balance)
		}
		return nil, err
	}
	_ = grpc.SetHeader(ctx, metadata.Pairs(headerAICredits, strconv.FormatInt(out.Balance.AI, 10), headerDataCredits, strconv.FormatInt(out.Balance.Data, 10),
		headerHTTPCode, strconv.Itoa(http.StatusAccepted), headerLocation, "/api/v1/runs/"+out.Run.ID))
	pb, err := runPB(out.Run)
	return &actionsv1.TriggerScheduleResponse{Run: pb}, err
}
