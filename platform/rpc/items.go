package rpc

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/atrium-hq/atrium/platform/value"
)

// checkItemsUnary refuses a request with more entries in a list or map
// than its field's max_items option allows (value.CheckItems), before the
// service sees it: one place, on the chain every service runs for the
// network and for callers in process, holds every request to the maxima
// the protos declare. It runs after the principal's verification, so that
// a caller who may not call the method learns that first.
func checkItemsUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if m, ok := req.(proto.Message); ok {
		if err := value.CheckItems(m); err != nil {
			return nil, err
		}
	}
	return handler(ctx, req)
}

// checkItemsStream does the same for every message a stream receives.
func checkItemsStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return handler(srv, itemsStream{ss})
}

type itemsStream struct{ grpc.ServerStream }

func (s itemsStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if msg, ok := m.(proto.Message); ok {
		return value.CheckItems(msg)
	}
	return nil
}
