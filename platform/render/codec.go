package render

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	protocodec "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The codecs below are gRPC's protobuf codec with one difference each, so
// that a rendered page crosses the gRPC hop without being copied: the
// server sends the rendered bytes where they are instead of marshalling them
// into a new buffer, and the client lets rendered_json point into the
// received buffer, which it keeps until the gateway has written the
// response. Both produce and accept exactly the protobuf wire format, so
// either end works with any other gRPC peer.

var defaultCodec = encoding.GetCodecV2(protocodec.Name)

// renderedField returns a message type's rendered_json field, or nil.
func renderedField(d protoreflect.MessageDescriptor) protoreflect.FieldDescriptor {
	if f, ok := fieldCache.Load(d.FullName()); ok {
		fd, _ := f.(protoreflect.FieldDescriptor)
		return fd
	}
	var fd protoreflect.FieldDescriptor
	if f := d.Fields().ByName(Field); f != nil && f.Kind() == protoreflect.BytesKind && !f.IsList() {
		fd = f
	}
	fieldCache.Store(d.FullName(), fd)
	return fd
}

var fieldCache sync.Map // protoreflect.FullName -> protoreflect.FieldDescriptor or nil

// RenderedBytes returns the rendered body m carries, if it has one.
func RenderedBytes(m proto.Message) ([]byte, bool) {
	r := m.ProtoReflect()
	f := renderedField(r.Descriptor())
	if f == nil {
		return nil, false
	}
	b := r.Get(f).Bytes()
	return b, len(b) > 0
}

// HasField reports whether messages of m's type can carry a rendered body.
func HasField(m proto.Message) bool { return renderedField(m.ProtoReflect().Descriptor()) != nil }

// ServerCodec is the codec of every Atrium gRPC server.
type ServerCodec struct{}

// Name is the protobuf codec's, so that clients need nothing special.
func (ServerCodec) Name() string { return protocodec.Name }

// Marshal sends a response that carries only a rendered body as the field's
// tag and length followed by the body itself, without copying it.
func (ServerCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return defaultCodec.Marshal(v)
	}
	b, ok := RenderedBytes(m)
	if !ok {
		return defaultCodec.Marshal(v)
	}
	f := renderedField(m.ProtoReflect().Descriptor())
	head := protowire.AppendTag(nil, f.Number(), protowire.BytesType)
	head = protowire.AppendVarint(head, uint64(len(b)))
	if proto.Size(m) != len(head)+len(b) {
		// Other fields are set too: marshal the message as usual.
		return defaultCodec.Marshal(v)
	}
	return mem.BufferSlice{mem.SliceBuffer(head), mem.SliceBuffer(b)}, nil
}

// Unmarshal is the protobuf codec's.
func (ServerCodec) Unmarshal(data mem.BufferSlice, v any) error {
	return defaultCodec.Unmarshal(data, v)
}

// Releaser holds the received buffers a request's response still points
// into, until the response has been written.
type Releaser struct {
	mu   sync.Mutex
	bufs []mem.Buffer
}

// Release returns the buffers to gRPC's pool. Nothing may use a rendered
// body received under the releaser afterwards.
func (r *Releaser) Release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.bufs {
		b.Free()
	}
	r.bufs = nil
}

func (r *Releaser) keep(b mem.Buffer) {
	r.mu.Lock()
	r.bufs = append(r.bufs, b)
	r.mu.Unlock()
}

type releaserKey struct{}

// WithReleaser returns ctx carrying a new releaser: gRPC calls made with it
// (through UnaryClientInterceptor) receive rendered bodies without copying
// them, and the caller must Release once it is done with their responses.
func WithReleaser(ctx context.Context) (context.Context, *Releaser) {
	r := &Releaser{}
	return context.WithValue(ctx, releaserKey{}, r), r
}

// UnaryClientInterceptor makes calls whose context carries a Releaser use
// the aliasing client codec.
func UnaryClientInterceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if r, ok := ctx.Value(releaserKey{}).(*Releaser); ok {
			if m, ok := reply.(proto.Message); ok && HasField(m) {
				opts = append(opts, grpc.ForceCodecV2(clientCodec{r}))
			}
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}

// clientCodec reads a response that is only a rendered body without copying
// it: rendered_json points into the received buffer, kept until the
// releaser releases it.
type clientCodec struct{ r *Releaser }

func (clientCodec) Name() string { return protocodec.Name }

func (clientCodec) Marshal(v any) (mem.BufferSlice, error) { return defaultCodec.Marshal(v) }

func (c clientCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("unmarshal: message is %T, want proto.Message", v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	if b, ok := onlyRendered(m, buf.ReadOnlyData()); ok {
		// protobuf's generated unmarshalers copy bytes fields whatever the
		// options say; a response that is only a rendered body is read
		// here instead, pointing into the received buffer.
		r := m.ProtoReflect()
		r.Set(renderedField(r.Descriptor()), protoreflect.ValueOfBytes(b))
		c.r.keep(buf)
		return nil
	}
	defer buf.Free()
	return proto.Unmarshal(buf.ReadOnlyData(), m)
}

// onlyRendered returns the rendered body of wire, the encoding of a message
// of m's type, when that body is its only field.
func onlyRendered(m proto.Message, wire []byte) ([]byte, bool) {
	f := renderedField(m.ProtoReflect().Descriptor())
	num, typ, n := protowire.ConsumeTag(wire)
	if n < 0 || num != f.Number() || typ != protowire.BytesType {
		return nil, false
	}
	b, m2 := protowire.ConsumeBytes(wire[n:])
	if m2 < 0 || n+m2 != len(wire) || len(b) == 0 {
		return nil, false
	}
	return b, true
}
