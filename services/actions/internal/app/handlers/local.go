package handlers

import (
	"context"

	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// The local action: ranks on a grid around a place.

// RunGridSearch is run_grid_search: the client's rank at each point of a
// grid around a location.
func RunGridSearch(ctx context.Context, x *action.Exec) (action.Result, error) {
	q := provider.GridQuery{
		Keyword: x.Input.Str("keyword"), Lat: x.Input.Num("lat"), Lng: x.Input.Num("lng"), RadiusKm: x.Input.Num("radius"),
		Size: 5, Domain: clientDomain(x), BusinessName: clientName(x),
	}
	g, err := x.P.Search.GridSearch(ctx, q)
	if err != nil {
		return action.Result{}, err
	}
	points := make([]any, len(g.Points))
	for i, p := range g.Points {
		points[i] = map[string]any{"lat": p.Lat, "lng": p.Lng, "rank": float64(p.Rank)}
	}
	competitors := make([]any, len(g.Competitors))
	for i, c := range g.Competitors {
		competitors[i] = c
	}
	row := map[string]any{
		"id": newID(x, "grid_searches", 0), "keyword": q.Keyword, "grid_size": float64(q.Size), "average_rank": g.AverageRank,
		"lat": q.Lat, "lng": q.Lng, "radius_km": q.RadiusKm, "points": points, "competitors": competitors,
		"source": x.P.Search.Source(), "tracked_at": ts(x.Now),
	}
	return action.Result{Data: row, Writes: []action.RecordWrite{{Resource: "grid_searches", Mode: action.Upsert, Rows: []map[string]any{row}}}}, nil
}
