package pgdb

import (
	"encoding/hex"
	"unsafe"

	"github.com/jackc/pgx/v5/pgtype"
)

// Arena holds the text of a page of rows in a few large buffers, so that
// scanning a row's string columns allocates nothing: each string points into
// the arena, which lives as long as any of them does. Scanning a page of
// fifty rows of eight strings is then a handful of allocations instead of
// four hundred.
//
// The bytes of a string are never written again once handed out, which is
// what makes strings that share a buffer safe.
type Arena struct {
	buf []byte
}

// maxChunk bounds the size of a new buffer: buffers start small (a single
// row needs little) and double up to it; a larger value gets a buffer of its
// own.
const maxChunk = 16 << 10

func (a *Arena) alloc(n int) []byte {
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]byte, 0, max(n, min(maxChunk, 2*cap(a.buf), 512)))
	}
	start := len(a.buf)
	a.buf = a.buf[:start+n]
	return a.buf[start : start+n : start+n]
}

func (a *Arena) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b)) //nolint:gosec // G103: the arena never writes a byte it has handed out (see Arena)
}

// Text returns a scan target for a text or uuid column that stores its value
// in *dst. Make the targets once per query and re-aim them at each row's
// fields (Retarget), or scan every row into the same variable and copy it.
func (a *Arena) Text(dst *string) *ArenaText { return &ArenaText{a: a, dst: dst} }

// ArenaText is a scan target whose string lives in an Arena.
type ArenaText struct {
	a   *Arena
	dst *string
}

// ScanBytes implements pgtype.BytesScanner (text, varchar, char columns).
func (t *ArenaText) ScanBytes(src []byte) error {
	b := t.a.alloc(len(src))
	copy(b, src)
	*t.dst = t.a.str(b)
	return nil
}

// ScanUUID implements pgtype.UUIDScanner, writing the canonical form.
func (t *ArenaText) ScanUUID(v pgtype.UUID) error {
	if !v.Valid {
		*t.dst = ""
		return nil
	}
	b := t.a.alloc(36)
	hex.Encode(b[0:8], v.Bytes[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], v.Bytes[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], v.Bytes[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], v.Bytes[8:10])
	b[23] = '-'
	hex.Encode(b[24:], v.Bytes[10:16])
	*t.dst = t.a.str(b)
	return nil
}
