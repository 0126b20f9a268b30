package atrium

import (
	"context"
	"iter"
	"net/url"
	"strconv"
)

// Row is a row of a dataset: its fields as JSON decodes them.
type Row map[string]any

// DataQuery is a read of one dataset of one client.
type DataQuery struct {
	// Resource is the dataset (keywords, blogs, ...); ClientID the client
	// (required for every dataset but the agency-wide ones).
	Resource, ClientID string
	// Limit (default 50, at most 200) and Offset page by position; Cursor
	// (a Pagination.NextCursor) by key, which costs the same at any depth.
	Limit, Offset int
	Cursor        string
	// Order is a field of the dataset, Direction asc or desc.
	Order, Direction string
	// FilterField and FilterValue keep the rows whose field equals the value.
	FilterField, FilterValue string
}

func (q DataQuery) values() url.Values {
	v := url.Values{"resource": {q.Resource}}
	for k, s := range map[string]string{"client_id": q.ClientID, "cursor": q.Cursor, "order": q.Order, "direction": q.Direction,
		"filter_field": q.FilterField, "filter_value": q.FilterValue} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Offset > 0 {
		v.Set("offset", strconv.Itoa(q.Offset))
	}
	return v
}

// Pagination says where a page of a dataset stands.
type Pagination struct {
	Total   int  `json:"total"`
	Limit   int  `json:"limit"`
	Offset  int  `json:"offset"`
	HasMore bool `json:"has_more"`
	// NextCursor reads the page after (same query, Cursor set); "" on
	// the last page.
	NextCursor string `json:"next_cursor"`
}

// DataPage is a page of a dataset.
type DataPage struct {
	Resource   string     `json:"resource"`
	ClientID   string     `json:"client_id"`
	Rows       []Row      `json:"data"`
	Pagination Pagination `json:"pagination"`
}

// DataService reads the per-client datasets (GET /api/v1/data).
type DataService struct{ t *transport }

// Read returns a page of a dataset.
func (s *DataService) Read(ctx context.Context, q DataQuery) (*DataPage, error) {
	var out DataPage
	if _, err := s.t.do(ctx, request{method: "GET", path: "/api/v1/data", query: q.values(), idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// All walks every row the query selects, from its offset or cursor, page
// after page by cursor.
func (s *DataService) All(ctx context.Context, q DataQuery) iter.Seq2[Row, error] {
	if q.Limit <= 0 {
		q.Limit = 200
	}
	first := true
	return cursorPages(ctx, func(ctx context.Context, cursor string) ([]Row, string, error) {
		pq := q
		if !first {
			pq.Cursor, pq.Offset = cursor, 0
		}
		first = false
		page, err := s.Read(ctx, pq)
		if err != nil {
			return nil, "", err
		}
		next := ""
		if page.Pagination.HasMore {
			next = page.Pagination.NextCursor
		}
		return page.Rows, next, nil
	})
}
