package filetype

import (
	"bytes"
	"testing"
)

// FuzzDimensions reads any bytes as each image kind. It must not panic,
// a size it gives must be one an image can have (1 to MaxSide a side, so
// no nonsense reaches an asset), and the streaming Probe, fed the bytes in
// small chunks as an upload arrives, must come to the same answer.
func FuzzDimensions(f *testing.F) {
	ihdr := func(w, h uint32, depth, colour byte) []byte {
		return pngHeader(w, h, depth, colour, 13, true)
	}
	for _, seed := range [][]byte{
		ihdr(1, 1, 8, 6), ihdr(0, 5, 8, 6), ihdr(5, 5, 4, 2), ihdr(5, 5, 16, 3), ihdr(1<<31, 1, 8, 0), pngHeader(5, 5, 8, 6, 13, false),
		[]byte("GIF89a\x01\x00\x01\x00"), []byte("GIF89a\x00\x00\x00\x00"),
		{0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x00, 0x10, 0x00, 0x10, 0x03},
		{0xff, 0xd8, 0xff, 0xe1, 0x00, 0x01}, {0xff, 0xd8, 0xff, 0xda},
		webpLossless(1000, 16383), webpExtended(4000, 3000), webpLossy(640, 480),
		avif(1920, 1080, 1), append(isoBox("ftyp", []byte("avif")), isoBox("mdat", []byte("x"))...),
		[]byte(`<svg width="1e400" height="-1"/>`), []byte(`<svg viewBox="0 0 300 150"/>`),
	} {
		for kind := range len(All) {
			f.Add(uint8(kind), seed)
		}
	}
	f.Fuzz(func(t *testing.T, kind uint8, file []byte) {
		typ := All[int(kind)%len(All)]
		if typ == PDF || typ == MP4 {
			return // no dimensions to read
		}
		s, err := Dimensions(typ, bytes.NewReader(file))
		if err == nil && (s.Width < 1 || s.Height < 1 || s.Width > MaxSide || s.Height > MaxSide) {
			t.Fatalf("%s: accepted a size of %d by %d", typ.Name, s.Width, s.Height)
		}
		p := NewProbe(typ)
		werr := chunks(p, file, 7)
		ps, perr := p.Result()
		if (err == nil) != (perr == nil) || ps != s {
			t.Fatalf("%s: Dimensions %v, %v; the probe %v, %v (write: %v)", typ.Name, s, err, ps, perr, werr)
		}
	})
}
