// Package datagrpc is the actions service's client of the data service:
// it writes the records actions create into the client's datasets, and
// reads one back, over the data service's internal gRPC API (never its
// tables).
package datagrpc

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	datav1 "github.com/atrium-hq/atrium/proto/atrium/data/v1"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

// Records writes and reads dataset rows in the data service.
type Records struct {
	client datav1.DataRecordsServiceClient
}

// New returns the port over conn, which must sign a service principal into
// every call.
func New(conn grpc.ClientConnInterface) *Records {
	return &Records{client: datav1.NewDataRecordsServiceClient(conn)}
}

var _ app.RecordWriter = (*Records)(nil)

var modes = map[action.WriteMode]datav1.WriteMode{action.Upsert: datav1.WriteMode_WRITE_MODE_UPSERT, action.Update: datav1.WriteMode_WRITE_MODE_UPDATE}

// WriteRecords implements app.RecordWriter.
func (r *Records) WriteRecords(ctx context.Context, clientID string, writes []action.RecordWrite) error {
	req := &datav1.WriteRecordsRequest{ClientId: clientID}
	for _, w := range writes {
		mode, ok := modes[w.Mode]
		if !ok {
			return fmt.Errorf("write to %s: unknown mode %d", w.Resource, w.Mode)
		}
		pw := &datav1.RecordWrite{Resource: w.Resource, Mode: mode}
		for _, row := range w.Rows {
			st, err := structpb.NewStruct(row)
			if err != nil {
				return fmt.Errorf("write to %s: row %v: %w", w.Resource, row["id"], err)
			}
			pw.Rows = append(pw.Rows, st)
		}
		req.Writes = append(req.Writes, pw)
	}
	_, err := r.client.WriteRecords(ctx, req)
	return err
}

// GetRecord implements app.RecordWriter.
func (r *Records) GetRecord(ctx context.Context, clientID, resource, id string) (map[string]any, error) {
	resp, err := r.client.GetRecord(ctx, &datav1.GetRecordRequest{ClientId: clientID, Resource: resource, Id: id})
	if status.Code(err) == codes.NotFound {
		return nil, app.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return resp.GetRow().AsMap(), nil
}

// listPage is how many rows one ListRecords call asks for: the data
// service's most.
const listPage = 1000

// ListRecords implements app.RecordWriter: pages of the data service's
// ListRecords until max rows or the last page.
func (r *Records) ListRecords(ctx context.Context, clientID, resource string, max int) ([]map[string]any, bool, error) {
	var out []map[string]any
	for offset := 0; ; {
		n := min(listPage, max-len(out)+1) // one more than max says whether more follow
		//nolint:gosec // G115: n is at most listPage and offset at most max, far below 2^31
		resp, err := r.client.ListRecords(ctx, &datav1.ListRecordsRequest{ClientId: clientID, Resource: resource, Limit: int32(n), Offset: int32(offset)})
		if err != nil {
			return nil, false, err
		}
		for _, row := range resp.GetRows() {
			out = append(out, row.AsMap())
		}
		offset += len(resp.GetRows())
		if len(out) > max {
			return out[:max], true, nil
		}
		if !resp.GetHasMore() || len(resp.GetRows()) == 0 {
			return out, false, nil
		}
	}
}
