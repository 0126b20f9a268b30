package app

import (
	"testing"

	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

// One batch may hold a run's action_runs row more than once (queued,
// running, its end); the data service takes an id once per write, so the
// merge keeps the last, and every other row.
func TestMergedKeepsTheLastRowOfAnID(t *testing.T) {
	row := func(id, status string) map[string]any { return map[string]any{"id": id, "status": status} }
	job := func(writes ...action.RecordWrite) *applyJob { return &applyJob{run: Run{Writes: writes}} }
	runs := func(rows ...map[string]any) action.RecordWrite {
		return action.RecordWrite{Resource: "action_runs", Mode: action.Upsert, Rows: rows}
	}
	blogs := action.RecordWrite{Resource: "blogs", Mode: action.Upsert, Rows: []map[string]any{row("b1", "published")}}
	got := merged([]*applyJob{
		job(runs(row("r1", "queued"))),
		job(runs(row("r2", "queued"))),
		job(runs(row("r1", "running"))),
		job(blogs, runs(row("r1", "success"))),
	})
	if len(got) != 2 || got[0].Resource != "action_runs" || got[1].Resource != "blogs" || len(got[1].Rows) != 1 {
		t.Fatalf("merged = %v", got)
	}
	if rows := got[0].Rows; len(rows) != 2 || rows[0]["id"] != "r1" || rows[0]["status"] != "success" || rows[1]["id"] != "r2" {
		t.Fatalf("action_runs rows = %v, want r1 success and r2 queued", rows)
	}
}
