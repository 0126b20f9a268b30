package render

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/types/dynamicpb"
)

// BenchmarkCodec measures the gRPC hop's encoding of a rendered page (18
// KB, the size of a 50-prospect page) on its own: the server's Marshal and
// the client's Unmarshal, with Atrium's codecs and with gRPC's protobuf
// codec, which copies the body on each side.
//
//	go test -run '^$' -bench BenchmarkCodec -benchmem ./platform/render
func BenchmarkCodec(b *testing.B) {
	body := bytes.Repeat([]byte(`{"id":"0b294876-6965-4b86-bbf9-f402823b3463","k":"value"}`), 18*1024/56)
	sent := page(nil, body)
	b.Run("zero-copy", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			wire, err := ServerCodec{}.Marshal(sent)
			if err != nil {
				b.Fatal(err)
			}
			var rel Releaser
			got := dynamicpb.NewMessage(pageType)
			if err := (clientCodec{&rel}).Unmarshal(wire, got); err != nil {
				b.Fatal(err)
			}
			rel.Release()
			wire.Free()
		}
	})
	b.Run("grpc-proto", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			wire, err := defaultCodec.Marshal(sent)
			if err != nil {
				b.Fatal(err)
			}
			got := dynamicpb.NewMessage(pageType)
			if err := defaultCodec.Unmarshal(wire, got); err != nil {
				b.Fatal(err)
			}
			wire.Free()
		}
	})
}
