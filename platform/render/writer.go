package render

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// Writer appends JSON to a byte slice, field by field, with the formats
// protojson uses. It does no reflection and allocates only when the slice
// grows. Callers write the structure themselves:
//
//	w.Open()            // {
//	w.Key("id")         // "id":   (with the comma before it when needed)
//	w.String(id)
//	w.Close()           // }
//
// It assumes its caller writes well-formed structure; it checks nothing.
type Writer struct {
	b []byte
}

// NewWriter returns a writer appending to a slice of the given capacity.
func NewWriter(capacity int) *Writer { return &Writer{b: make([]byte, 0, capacity)} }

// Bytes is what was written.
func (w *Writer) Bytes() []byte { return w.b }

// Len is how many bytes were written.
func (w *Writer) Len() int { return len(w.b) }

// Raw appends JSON that is already encoded, as a value.
func (w *Writer) Raw(json []byte) {
	w.sep()
	w.b = append(w.b, json...)
}

// sep writes the comma a key or value needs: none at the start, after an
// opening bracket or after a key.
func (w *Writer) sep() {
	if n := len(w.b); n > 0 {
		switch w.b[n-1] {
		case ':', '[', '{':
			return
		}
		w.b = append(w.b, ',')
	}
}

// Open starts an object.
func (w *Writer) Open() {
	w.sep()
	w.b = append(w.b, '{')
}

// Close ends an object.
func (w *Writer) Close() {
	w.b = append(w.b, '}')
}

// OpenArray starts an array.
func (w *Writer) OpenArray() {
	w.sep()
	w.b = append(w.b, '[')
}

// CloseArray ends an array.
func (w *Writer) CloseArray() {
	w.b = append(w.b, ']')
}

// Key writes an object key; the value follows.
func (w *Writer) Key(k string) {
	w.sep()
	w.b = appendString(w.b, k)
	w.b = append(w.b, ':')
}

// String writes a string value.
func (w *Writer) String(s string) {
	w.sep()
	w.b = appendString(w.b, s)
}

// Bool writes true or false.
func (w *Writer) Bool(v bool) {
	w.sep()
	w.b = strconv.AppendBool(w.b, v)
}

// Null writes null.
func (w *Writer) Null() {
	w.sep()
	w.b = append(w.b, "null"...)
}

// Int writes an integer that fits 32 bits, as protojson prints int32.
func (w *Writer) Int(v int64) {
	w.sep()
	w.b = strconv.AppendInt(w.b, v, 10)
}

// Float writes a double as protojson does: the shortest representation
// that round-trips, exponent form outside [1e-6, 1e21), and the strings
// "NaN", "Infinity" and "-Infinity" for the values JSON cannot hold.
func (w *Writer) Float(v float64) {
	w.sep()
	switch {
	case math.IsNaN(v):
		w.b = append(w.b, `"NaN"`...)
		return
	case math.IsInf(v, 1):
		w.b = append(w.b, `"Infinity"`...)
		return
	case math.IsInf(v, -1):
		w.b = append(w.b, `"-Infinity"`...)
		return
	}
	format := byte('f')
	if abs := math.Abs(v); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	n := len(w.b)
	w.b = strconv.AppendFloat(w.b, v, format, -1, 64)
	if format == 'e' {
		// Clean up e-09 to e-9, as encoding/json and protojson do.
		if m := len(w.b); m-n >= 4 && w.b[m-4] == 'e' && w.b[m-3] == '-' && w.b[m-2] == '0' {
			w.b[m-2] = w.b[m-1]
			w.b = w.b[:m-1]
		}
	}
}

// Time writes a timestamp as protojson writes google.protobuf.Timestamp:
// RFC 3339 in UTC with a Z, and 0, 3, 6 or 9 fractional digits, as few as
// the value needs.
func (w *Writer) Time(t time.Time) {
	w.sep()
	w.b = AppendTime(w.b, t)
}

// TimeOrNull writes t, or null when it is nil.
func (w *Writer) TimeOrNull(t *time.Time) {
	if t == nil {
		w.Null()
		return
	}
	w.Time(*t)
}

// StringOrNull writes s, or null when it is empty (an unset
// google.protobuf.StringValue).
func (w *Writer) StringOrNull(s string) {
	if s == "" {
		w.Null()
		return
	}
	w.String(s)
}

// AppendTime appends t in protojson's Timestamp format, quoted. It writes
// the digits itself: time.Time.AppendFormat parses its layout on every call.
func AppendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	hour, minute, sec := t.Clock()
	if year < 0 || year > 9999 {
		// Outside what a Timestamp may hold; protojson refuses these, and
		// Atrium never stores them. Write something RFC 3339-shaped.
		return append(append(append(b, '"'), t.Format(time.RFC3339Nano)...), '"')
	}
	//nolint:gosec // G115: each is one decimal digit of a date and time field
	b = append(b, '"',
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+int(month)/10), byte('0'+int(month)%10), '-',
		byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':',
		byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+sec/10), byte('0'+sec%10))
	if ns := t.Nanosecond(); ns != 0 {
		digits := 9
		switch {
		case ns%1_000_000 == 0:
			ns /= 1_000_000
			digits = 3
		case ns%1_000 == 0:
			ns /= 1_000
			digits = 6
		}
		b = append(b, '.')
		for i := digits - 1; i >= 0; i-- {
			b = append(b, byte('0'+ns/pow10[i]%10))
		}
	}
	return append(b, 'Z', '"')
}

var pow10 = [...]int{1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000}

const hexDigits = "0123456789abcdef"

// plain marks the ASCII bytes a JSON string holds as they are.
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString appends s as a JSON string the way protojson does: ", \ and
// control characters escaped (\b \f \n \r \t by name, the rest as \u00XX),
// everything else, HTML characters and U+2028/U+2029 included, as is.
// Invalid UTF-8 becomes U+FFFD; Atrium's stores only hold valid UTF-8.
//
// Most strings need no escape at all: they are copied in one move and then
// checked eight bytes at a time; only a string that needs escaping (or has
// non-ASCII bytes to validate) takes the byte-by-byte path.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	n := len(b)
	b = append(b, s...)
	if clean(b[n:]) {
		return append(b, '"')
	}
	return appendEscaped(b[:n], s)
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// clean reports whether p holds only ASCII bytes that need no escaping.
func clean(p []byte) bool {
	for len(p) >= 8 {
		x := binary.LittleEndian.Uint64(p)
		// A byte below 0x20, a '"' or a '\\' (each found as a zero byte after
		// a subtraction or an XOR), or a byte with its high bit set.
		if (x-ones*0x20)&^x&highs != 0 || hasZero(x^(ones*'"')) || hasZero(x^(ones*'\\')) || x&highs != 0 {
			return false
		}
		p = p[8:]
	}
	for _, c := range p {
		if c >= utf8.RuneSelf || !plain[c] {
			return false
		}
	}
	return true
}

// hasZero reports whether any byte of x is zero.
func hasZero(x uint64) bool { return (x-ones)&^x&highs != 0 }

func appendEscaped(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] {
				i++
				continue
			}
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			b = append(b, s[start:i]...)
			b = append(b, "\ufffd"...)
			i++
			start = i
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Marshal is json.Marshal without HTML escaping, the way the rendered
// bodies write strings: stored values keep "<p>" as the client wrote it
// rather than "\u003cp\u003e".
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
