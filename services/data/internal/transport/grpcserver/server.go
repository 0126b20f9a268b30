package grpcserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/render"
	datav1 "github.com/atrium-hq/atrium/proto/atrium/data/v1"
	"github.com/atrium-hq/atrium/services/data/internal/app"
)

// Server implements the data gRPC services.
type Server struct {
	datav1.UnimplementedDataServiceServer
	datav1.UnimplementedDataAdminServiceServer
	datav1.UnimplementedDataRecordsServiceServer
	datasets *app.Datasets
}

// NewServer returns a server over the use cases.
func NewServer(datasets *app.Datasets) *Server { return &Server{datasets: datasets} }

// Register registers the data services on r.
func (s *Server) Register(r grpc.ServiceRegistrar) {
	datav1.RegisterDataServiceServer(r, s)
	datav1.RegisterDataAdminServiceServer(r, s)
	datav1.RegisterDataRecordsServiceServer(r, s)
}

// ReadDataset implements datav1.DataServiceServer.
func (s *Server) ReadDataset(ctx context.Context, req *datav1.ReadDatasetRequest) (*datav1.ReadDatasetResponse, error) {
	p, err := s.datasets.Read(ctx, principal.AgencyID(ctx), app.ReadParams{
		Resource: req.Resource, ClientID: req.ClientId, Limit: req.Limit, Offset: req.Offset,
		Order: req.Order, Direction: req.Direction, FilterField: req.FilterField, FilterValue: req.FilterValue, Cursor: req.Cursor,
	})
	if err != nil {
		return nil, err
	}
	if render.Requested(ctx) {
		return &datav1.ReadDatasetResponse{RenderedJson: renderPage(p)}, nil
	}
	out := &datav1.ReadDatasetResponse{Resource: p.Resource.Name, Data: make([]*structpb.Struct, len(p.Rows)), Pagination: &datav1.Pagination{
		Total: int32(min(p.Total, math.MaxInt32)), Limit: p.Query.Page.Limit, Offset: p.Query.Page.Offset, HasMore: p.HasMore(), //nolint:gosec // G115: Total clamped on the line
	}}
	if p.NextCursor != "" {
		out.Pagination.NextCursor = &p.NextCursor
	}
	if p.Resource.Name != app.ClientsResource {
		out.ClientId = &p.Query.ClientID
	}
	for i, r := range p.Rows {
		var st structpb.Struct
		if err := st.UnmarshalJSON(r.Data); err != nil {
			return nil, apperr.Unavailable(err, "row %s has unreadable data", r.ID)
		}
		out.Data[i] = &st
	}
	return out, nil
}

// CreateRows implements datav1.DataAdminServiceServer.
func (s *Server) CreateRows(ctx context.Context, req *datav1.CreateRowsRequest) (*datav1.CreateRowsResponse, error) {
	objs := make([]map[string]any, len(req.Rows))
	for i, r := range req.Rows {
		if r != nil {
			objs[i] = r.AsMap()
		}
	}
	n, err := s.datasets.Insert(ctx, req.ClientId, req.Resource, objs)
	if err != nil {
		return nil, err
	}
	return &datav1.CreateRowsResponse{Inserted: int32(n)}, nil //nolint:gosec // G115: rows of one request, which the gRPC message size bounds far below 2^31
}

// LoadRows implements datav1.DataAdminServiceServer: the bulk path.
func (s *Server) LoadRows(stream grpc.ClientStreamingServer[datav1.LoadRowsRequest, datav1.LoadRowsResponse]) error {
	ctx := stream.Context()
	first, err := stream.Recv()
	if errors.Is(err, io.EOF) {
		return apperr.Invalid("the load sent nothing: its first message names client_id and resource")
	}
	if err != nil {
		return err
	}
	l, err := s.datasets.NewLoader(ctx, first.ClientId, first.Resource)
	if err != nil {
		return err
	}
	defer l.Abort()
	for msg := first; ; {
		if err := l.Write(ctx, msg.Ndjson); err != nil {
			return err
		}
		if msg, err = stream.Recv(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return err
		}
	}
	if err := l.Close(ctx); err != nil {
		return err
	}
	return stream.SendAndClose(&datav1.LoadRowsResponse{Loaded: l.Loaded()})
}

// renderPage writes the read's HTTP body once, each row as stored.
func renderPage(p app.Page) []byte {
	size := 160
	for i := range p.Rows {
		size += len(p.Rows[i].Data) + 1
	}
	w := render.NewWriter(size)
	w.Open()
	w.Key("resource")
	w.String(p.Resource.Name)
	if p.Resource.Name != app.ClientsResource {
		w.Key("client_id")
		w.String(p.Query.ClientID)
	}
	w.Key("data")
	w.OpenArray()
	for i := range p.Rows {
		w.Raw(json.RawMessage(p.Rows[i].Data))
	}
	w.CloseArray()
	w.Key("pagination")
	w.Open()
	w.Key("total")
	w.Int(int64(p.Total))
	w.Key("limit")
	w.Int(int64(p.Query.Page.Limit))
	w.Key("offset")
	w.Int(int64(p.Query.Page.Offset))
	w.Key("has_more")
	w.Bool(p.HasMore())
	if p.NextCursor != "" {
		w.Key("next_cursor")
		w.String(p.NextCursor)
	}
	w.Close()
	w.Close()
	return w.Bytes()
}
