package render

import (
	"bytes"
	"reflect"
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// pageType is a response type with a typed field and rendered_json, as the
// services' list responses have.
var pageType = func() protoreflect.MessageDescriptor {
	fdp := &descriptorpb.FileDescriptorProto{
		Name: proto.String("page.proto"), Package: proto.String("t"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("Page"),
			Field: []*descriptorpb.FieldDescriptorProto{
				{Name: proto.String("data"), Number: proto.Int32(1), Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(),
					Label: descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum(), JsonName: proto.String("data")},
				{Name: proto.String(Field), Number: proto.Int32(1000), Type: descriptorpb.FieldDescriptorProto_TYPE_BYTES.Enum(),
					Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), JsonName: proto.String("renderedJson")},
			},
		}},
	}
	fd, err := protodesc.NewFile(fdp, nil)
	if err != nil {
		panic(err)
	}
	return fd.Messages().Get(0)
}()

func page(typed []string, rendered []byte) *dynamicpb.Message {
	m := dynamicpb.NewMessage(pageType)
	list := m.Mutable(pageType.Fields().ByName("data")).List()
	for _, s := range typed {
		list.Append(protoreflect.ValueOfString(s))
	}
	if rendered != nil {
		m.Set(pageType.Fields().ByName(Field), protoreflect.ValueOfBytes(rendered))
	}
	return m
}

func materialize(t *testing.T, s mem.BufferSlice) []byte {
	t.Helper()
	defer s.Free()
	return s.Materialize()
}

// TestServerCodecIsWireCompatible: whatever path the server codec takes, it
// produces the protobuf encoding any peer expects.
func TestServerCodecIsWireCompatible(t *testing.T) {
	body := bytes.Repeat([]byte(`{"data":[1,2,3]}`), 2000)
	for name, m := range map[string]*dynamicpb.Message{
		"rendered only": page(nil, body),
		"typed only":    page([]string{"a", "b"}, nil),
		"both":          page([]string{"a"}, body),
		"empty":         page(nil, nil),
	} {
		got, err := ServerCodec{}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		wire := materialize(t, got)
		back := dynamicpb.NewMessage(pageType)
		if err := proto.Unmarshal(wire, back); err != nil || !proto.Equal(back, m) {
			t.Errorf("%s: the server codec's encoding does not decode to the message (%v)", name, err)
		}
		// A dynamic message's field order varies; with one field it cannot.
		if want, _ := proto.Marshal(m); name == "rendered only" && !bytes.Equal(wire, want) {
			t.Errorf("%s: server codec encoding differs from proto.Marshal", name)
		}
	}
}

// TestClientCodecAliasesRenderedBodies: a rendered-only response is read
// without a copy, and typed responses decode as usual.
func TestClientCodecAliasesRenderedBodies(t *testing.T) {
	body := bytes.Repeat([]byte(`{"k":"v"}`), 3000)
	for name, sent := range map[string]*dynamicpb.Message{
		"rendered only": page(nil, body),
		"typed only":    page([]string{"a", "b"}, nil),
		"both":          page([]string{"a"}, body),
	} {
		wire, _ := proto.Marshal(sent)
		// Two buffers, as a body larger than one HTTP/2 frame arrives.
		in := mem.BufferSlice{mem.Copy(wire[:len(wire)/2], mem.DefaultBufferPool()), mem.Copy(wire[len(wire)/2:], mem.DefaultBufferPool())}
		var rel Releaser
		got := dynamicpb.NewMessage(pageType)
		if err := (clientCodec{&rel}).Unmarshal(in, got); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(got, sent) {
			t.Fatalf("%s: decoded %v, want %v", name, got, sent)
		}
		if name == "rendered only" {
			if len(rel.bufs) != 1 {
				t.Fatalf("the received buffer is not kept until release")
			}
			b, _ := RenderedBytes(got)
			kept := rel.bufs[0].ReadOnlyData()
			// Pointer is the address of a slice's first element.
			start := reflect.ValueOf(kept).Pointer()
			if at := reflect.ValueOf(b).Pointer(); at < start || at >= start+uintptr(len(kept)) {
				t.Fatal("rendered_json was copied instead of pointing into the received buffer")
			}
		} else if len(rel.bufs) != 0 {
			t.Fatalf("%s: a buffer was kept for a response that does not point into it", name)
		}
		rel.Release()
		in.Free()
	}
}
