package rpc

import (
	"context"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/atrium-hq/atrium/platform/value"
)

// checkItemsUnary refuses a request with more entries in a list or map
// than its field's max_items option allows (value.CheckItems), before the
// service sees it: one place, on the chain every service runs for the
// network and for callers in process, holds every request to the maxima
// the protos declare. It runs after the principal's verification, so that
// a caller who may not call the method learns that first.
func checkItemsUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if m, ok := req.(proto.Message); ok {
		if err := value.CheckBody(m, bodyField(info.FullMethod)); err != nil {
			return nil, err
		}
	}
	return handler(ctx, req)
}

// checkItemsStream does the same for every message a stream receives.
func checkItemsStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return handler(srv, itemsStream{ServerStream: ss, body: bodyField(info.FullMethod)})
}

type itemsStream struct {
	grpc.ServerStream
	body string
}

func (s itemsStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if msg, ok := m.(proto.Message); ok {
		return value.CheckBody(msg, s.body)
	}
	return nil
}

var bodies sync.Map // full method -> the field its HTTP rule maps the body to, or ""

// bodyField is the request field a method's google.api.http rule maps the
// whole HTTP body to ("params" for POST /api/v1/data), if any: the 400 of
// a field the client never named calls it the request body. The rule is
// read through the registry, as the gateway's generated code registers it,
// so that the platform needs no import of the annotations.
func bodyField(fullMethod string) string {
	if v, ok := bodies.Load(fullMethod); ok {
		return v.(string)
	}
	body := lookupBody(fullMethod)
	bodies.Store(fullMethod, body)
	return body
}

func lookupBody(fullMethod string) string {
	service, method, ok := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	if !ok {
		return ""
	}
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(service))
	sd, isService := d.(protoreflect.ServiceDescriptor)
	if err != nil || !isService {
		return ""
	}
	md := sd.Methods().ByName(protoreflect.Name(method))
	xt, err := protoregistry.GlobalTypes.FindExtensionByName("google.api.http")
	if md == nil || err != nil || !proto.HasExtension(md.Options(), xt) {
		return ""
	}
	rule, ok := proto.GetExtension(md.Options(), xt).(proto.Message)
	if !ok {
		return ""
	}
	r := rule.ProtoReflect()
	fd := r.Descriptor().Fields().ByName("body")
	if fd == nil || fd.Kind() != protoreflect.StringKind {
		return ""
	}
	if body := r.Get(fd).String(); body != "*" {
		return body
	}
	return ""
}
