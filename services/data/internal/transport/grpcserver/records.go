package grpcserver

import (
	"context"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/atrium-hq/atrium/platform/apperr"
	datav1 "github.com/atrium-hq/atrium/proto/atrium/data/v1"
	"github.com/atrium-hq/atrium/services/data/internal/app"
)

var writeModes = map[datav1.WriteMode]app.WriteMode{
	datav1.WriteMode_WRITE_MODE_UPSERT: app.WriteUpsert,
	datav1.WriteMode_WRITE_MODE_UPDATE: app.WriteUpdate,
}

// WriteRecords implements datav1.DataRecordsServiceServer.
func (s *Server) WriteRecords(ctx context.Context, req *datav1.WriteRecordsRequest) (*datav1.WriteRecordsResponse, error) {
	writes := make([]app.RecordWrite, len(req.Writes))
	for i, w := range req.Writes {
		// An unknown mode stays zero, which the use case refuses by index.
		writes[i] = app.RecordWrite{Resource: w.GetResource(), Mode: writeModes[w.GetMode()], Rows: make([]map[string]any, len(w.GetRows()))}
		for j, r := range w.GetRows() {
			if r != nil {
				writes[i].Rows[j] = r.AsMap()
			}
		}
	}
	res, err := s.datasets.WriteRecords(ctx, req.ClientId, writes)
	if err != nil {
		return nil, err
	}
	//nolint:gosec // G115: records of one request, which the gRPC message size bounds far below 2^31
	return &datav1.WriteRecordsResponse{Inserted: int32(res.Inserted), Updated: int32(res.Updated), Skipped: int32(res.Skipped)}, nil
}

// GetRecord implements datav1.DataRecordsServiceServer.
func (s *Server) GetRecord(ctx context.Context, req *datav1.GetRecordRequest) (*datav1.GetRecordResponse, error) {
	row, err := s.datasets.GetRecord(ctx, req.ClientId, req.Resource, req.Id)
	if err != nil {
		return nil, err
	}
	var st structpb.Struct
	if err := st.UnmarshalJSON(row.Data); err != nil {
		return nil, apperr.Unavailable(err, "row %s has unreadable data", row.ID)
	}
	return &datav1.GetRecordResponse{Row: &st}, nil
}

// ListRecords implements datav1.DataRecordsServiceServer.
func (s *Server) ListRecords(ctx context.Context, req *datav1.ListRecordsRequest) (*datav1.ListRecordsResponse, error) {
	rows, more, err := s.datasets.ListRecords(ctx, req.ClientId, req.Resource, req.Limit, req.Offset)
	if err != nil {
		return nil, err
	}
	out := &datav1.ListRecordsResponse{HasMore: more, Rows: make([]*structpb.Struct, len(rows))}
	for i, row := range rows {
		var st structpb.Struct
		if err := st.UnmarshalJSON(row.Data); err != nil {
			return nil, apperr.Unavailable(err, "row %s has unreadable data", row.ID)
		}
		out.Rows[i] = &st
	}
	return out, nil
}
