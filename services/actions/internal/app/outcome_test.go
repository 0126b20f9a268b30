package app_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// nanGrid is SEO data whose grid answer holds a number JSON cannot write.
type nanGrid struct{ provider.SearchData }

func (nanGrid) Source() string { return "test" }

func (nanGrid) GridSearch(context.Context, provider.GridQuery) (provider.GridResult, error) {
	return provider.GridResult{Points: []provider.GridPoint{{Lat: 1, Lng: 2, Rank: 3}}, AverageRank: math.NaN()}, nil
}

// An outcome the store cannot keep (a model's answer with a U+0000, which
// PostgreSQL's jsonb refuses; a number JSON cannot write) is not an outage
// that a retry mends: the run ends at once as an error that says so, with
// its cost released, its completion event and its action_runs row, rather
// than failing the request with its credits held until recovery calls it
// interrupted.
func TestAnOutcomeTheStoreCannotKeepEndsTheRunAtOnce(t *testing.T) {
	onEveryStore(t, func(t *testing.T, newEnv func(*testing.T, app.Config) *env) {
		for _, c := range []struct {
			name     string
			body     func(e *env) map[string]any
			dataset  string
			provider func(e *env)
		}{
			{"U+0000 in the answer", func(e *env) map[string]any {
				return map[string]any{"action": "run_llm_visibility", "client_id": e.client.ID, "prompt": "Best bakery in Leeds?", "brand_name": "Bakery"}
			}, "llm_reports", func(e *env) { e.text.suffix = "\x00" }},
			{"NaN in the grid", func(e *env) map[string]any {
				return map[string]any{"action": "run_grid_search", "client_id": e.client.ID, "keyword": "bakery", "lat": 53.8, "lng": -1.55}
			}, "grid_searches", func(e *env) { e.providers.Search = nanGrid{} }},
		} {
			t.Run(c.name, func(t *testing.T) {
				e := newEnv(t, app.Config{})
				e.grant(t, 10, 10)
				c.provider(e)
				body := c.body(e)
				out, err := e.actions.Run(t.Context(), e.agency, body, "key-1")
				if err != nil {
					t.Fatalf("Run: %v; want the run's outcome, not a failed request", err)
				}
				msg := fmt.Sprint(out.Run.Data["error"])
				if out.Run.Status != app.StatusError || out.Run.StatusCode != 500 || !strings.Contains(msg, "cannot be stored") ||
					!strings.Contains(msg, "nothing was charged") || !strings.Contains(msg, out.Run.ID) {
					t.Fatalf("outcome %+v; want error 500 saying the result cannot be stored and nothing was charged", out.Run)
				}
				if out.Balance != (app.Balance{AI: 10, Data: 10}) {
					t.Fatalf("balance %+v, want the cost released at once", out.Balance)
				}
				stored, err := e.store.Run(t.Context(), out.Run.ID)
				if err != nil || stored.Status != app.StatusError || fmt.Sprint(stored.Data["error"]) != msg {
					t.Fatalf("stored run %+v, %v; want it ended with the same error", stored, err)
				}
				if evs := e.events(); len(evs) != 1 || evs[0].Status != "error" || evs[0].StatusCode != 500 {
					t.Fatalf("completion events %+v, want the error's", evs)
				}
				if e.records.count("action_runs") != 1 || e.records.count(c.dataset) != 0 {
					t.Fatalf("written: %d action_runs, %d %s; want the run's row and nothing of the result",
						e.records.count("action_runs"), e.records.count(c.dataset), c.dataset)
				}
				again, err := e.actions.Run(t.Context(), e.agency, body, "key-1")
				if err != nil || !again.Replayed || again.Run.ID != out.Run.ID || again.Run.StatusCode != 500 {
					t.Fatalf("the same Idempotency-Key: %+v, %v; want the error replayed", again, err)
				}
				e.advance(time.Hour)
				if n, _, err := e.actions.Recover(t.Context()); err != nil || n != 0 {
					t.Fatalf("recovery ended %d runs (%v); want none left to it", n, err)
				}
			})
		}
	})
}
