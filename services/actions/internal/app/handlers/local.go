package handlers

import (
	"context"

	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/datasets"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// The local action: ranks on a grid around a place.

// RunGridSearch is run_grid_search: the client's rank at each point of a
// grid around a location. tracked_at is when the ranks were measured: the
// run's start, or the day a cached answer was.
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
	d := datasets.GridSearches
	row := map[string]any{
		d.ID: newID(x, d.Resource, 0), d.Keyword: q.Keyword, d.GridSize: float64(q.Size), d.AverageRank: g.AverageRank,
		d.Lat: q.Lat, d.Lng: q.Lng, d.RadiusKm: q.RadiusKm, d.Points: points, d.Competitors: competitors,
		d.Source: x.P.Search.Source(), d.TrackedAt: ts(provider.MeasuredAt(ctx, x.Now)),
	}
	return action.Result{Data: row, Writes: []action.RecordWrite{upsert(d.Resource, row)}}, nil
}
