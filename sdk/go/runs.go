package atrium

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Run is an action run as GET /api/v1/runs/{run_id} shows it.
type Run struct {
	ID       string `json:"id"`
	Action   string `json:"action"`
	ClientID string `json:"client_id"`
	// State is queued, running, success, error or canceled.
	State string `json:"state"`
	// StatusCode is 202 while the run is queued or running, then the
	// outcome's (499 once canceled).
	StatusCode int `json:"status_code"`
	// Data is the record, or {"error": ...}; nil until the run finishes.
	Data    map[string]any `json:"data"`
	Credits struct {
		// Reserved is held from submission; Spent is charged only on
		// success.
		Reserved Credits `json:"reserved"`
		Spent    Credits `json:"spent"`
	} `json:"credits"`
	IdempotencyKey *string    `json:"idempotency_key"`
	CreatedAt      time.Time  `json:"created_at"`
	StartedAt      *time.Time `json:"started_at"`
	FinishedAt     *time.Time `json:"finished_at"`
}

// Finished reports whether the run has ended (success, error or canceled).
func (r *Run) Finished() bool { return r.State != "queued" && r.State != "running" }

// Submission is the answer to Submit: the run's id, and its outcome when
// it finished within the wait asked for (nil otherwise).
type Submission struct {
	RunID string
	// State is queued or running while Result is nil.
	State  string
	Result *ActionResult
}

// WithWait makes Submit wait up to d (at most a minute, whole seconds) for
// the run to finish before it answers with the run's id.
func WithWait(d time.Duration) RunOption { return func(s *runSettings) { s.wait = d } }

// Submit queues action for client (Prefer: respond-async): the answer
// comes at once with the run's id, its cost reserved; Runs.Wait or
// Runs.Get give the outcome. Like Run it carries an Idempotency-Key, so a
// retry answers the same run.
func (s *ActionsService) Submit(ctx context.Context, action, clientID string, fields map[string]any, opts ...RunOption) (*Submission, error) {
	rs := settings(opts)
	prefer := "respond-async"
	if rs.wait > 0 {
		prefer += fmt.Sprintf(", wait=%d", max(1, min(60, int(rs.wait/time.Second))))
	}
	var out ActionResult
	resp, err := s.t.do(ctx, request{method: "POST", path: "/api/v1/data", body: actionBody(action, clientID, fields),
		header: http.Header{"Idempotency-Key": {rs.key}, "Prefer": {prefer}}, idempotent: true}, &out)
	if err != nil {
		return nil, err
	}
	fill(&out, resp, rs.key)
	if resp.status == http.StatusAccepted {
		id, _ := out.Data["run_id"].(string)
		state, _ := out.Data["state"].(string)
		return &Submission{RunID: id, State: state}, nil
	}
	// Finished within the wait, or a replay of a finished run: the run's
	// id is not in the answer; its outcome is.
	return &Submission{State: out.Status, Result: &out}, nil
}

// RunsService reads, waits for and cancels the agency's action runs.
type RunsService struct{ t *transport }

const runsPath = "/api/v1/runs"

// Get returns a run.
func (s *RunsService) Get(ctx context.Context, id string) (*Run, error) {
	return s.get(ctx, id, 0)
}

func (s *RunsService) get(ctx context.Context, id string, wait time.Duration) (*Run, error) {
	var out struct {
		Run Run `json:"run"`
	}
	r := request{method: "GET", path: runsPath + path(id), idempotent: true}
	if wait > 0 {
		r.header = http.Header{"Prefer": {fmt.Sprintf("wait=%d", max(1, min(60, int(wait/time.Second))))}}
	}
	_, err := s.t.do(ctx, r, &out)
	return &out.Run, err
}

// Wait returns the run once it has finished, asking the server to hold
// each request up to 20 seconds, until ctx ends.
func (s *RunsService) Wait(ctx context.Context, id string) (*Run, error) {
	for {
		run, err := s.get(ctx, id, 20*time.Second)
		if err != nil || run.Finished() {
			return run, err
		}
		if err := ctx.Err(); err != nil {
			return run, err
		}
	}
}

// Cancel cancels a queued or running run: it ends canceled and its
// credits are released. A finished run is a *Error with status 409.
func (s *RunsService) Cancel(ctx context.Context, id string) (*Run, error) {
	var out struct {
		Run Run `json:"run"`
	}
	_, err := s.t.do(ctx, request{method: "POST", path: runsPath + path(id, "cancel"), body: map[string]any{}, idempotent: true}, &out)
	return &out.Run, err
}

// RunQuery filters List; empty fields select all.
type RunQuery struct {
	ClientID, State, Action string
}

// List walks the agency's runs, newest first.
func (s *RunsService) List(ctx context.Context, q RunQuery) iter.Seq2[Run, error] {
	return cursorPages(ctx, func(ctx context.Context, cursor string) ([]Run, string, error) {
		v := url.Values{"limit": {strconv.Itoa(100)}}
		for k, val := range map[string]string{"client_id": q.ClientID, "state": q.State, "action": q.Action, "cursor": cursor} {
			if val != "" {
				v.Set(k, val)
			}
		}
		var out struct {
			Runs       []Run  `json:"runs"`
			NextCursor string `json:"next_cursor"`
		}
		_, err := s.t.do(ctx, request{method: "GET", path: runsPath, query: v, idempotent: true}, &out)
		return out.Runs, out.NextCursor, err
	})
}
