package filetype

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strconv"
	"strings"
)

// Size is an image's width and height in pixels as shown: a JPEG turned by
// its EXIF orientation, or an AVIF by its irot, is as wide as it is shown.
type Size struct {
	Width, Height int
}

// ErrNoSize: an SVG with no width, height or viewBox has no size of its
// own (it takes its container's).
var ErrNoSize = errors.New("filetype: the image has no size of its own")

// MaxHeader bounds what Dimensions reads of a header before giving up, so
// a file that is all header costs a bounded amount of memory.
const MaxHeader = 1 << 20

// Dimensions reads the size of an image of kind t from the start of its
// file, reading only as far as its header. An error names what is wrong
// with the header; ErrNoSize is an SVG without a size.
func Dimensions(t Type, r io.Reader) (Size, error) {
	br := bufio.NewReaderSize(r, 4096)
	var (
		s   Size
		err error
	)
	switch t {
	case PNG:
		s, err = pngSize(br)
	case GIF:
		s, err = gifSize(br)
	case JPEG:
		s, err = jpegSize(br)
	case WebP:
		s, err = webpSize(br)
	case AVIF:
		s, err = avifSize(br)
	case SVG:
		return svgSize(br)
	default:
		return Size{}, fmt.Errorf("filetype: %s has no dimensions", t.Name)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = errors.New("the file ends before its header does")
	}
	if err == nil && (s.Width <= 0 || s.Height <= 0 || s.Width > MaxSide || s.Height > MaxSide) {
		err = fmt.Errorf("its header gives a size of %d by %d pixels; an image is 1 to %d pixels a side", s.Width, s.Height, MaxSide)
	}
	return s, err
}

// MaxSide is the most pixels an image may be on either side: 65,535, the
// most a JPEG or a GIF can say. A PNG, WebP or AVIF can write larger sizes,
// but one that does is a header written wrong, or an image no page shows
// (its pixels alone would take gigabytes to decode), not a web asset.
const MaxSide = 1<<16 - 1

// pngBitDepths are the bit depths the PNG specification (ISO/IEC 15948,
// section 11.2.2) allows for each colour type; no other colour type
// exists.
var pngBitDepths = map[byte][]byte{
	0: {1, 2, 4, 8, 16}, // greyscale
	2: {8, 16},          // truecolour
	3: {1, 2, 4, 8},     // indexed
	4: {8, 16},          // greyscale with alpha
	6: {8, 16},          // truecolour with alpha
}

// pngSize reads the IHDR chunk, which must come first, and checks it as a
// decoder would: its length (13), its CRC, a bit depth its colour type
// allows, and the only compression and filter methods there are (0). A
// header that fails any of these gives sizes nobody can trust.
func pngSize(r *bufio.Reader) (Size, error) {
	var h [33]byte // signature, IHDR's length and type, its 13 bytes, its CRC
	if _, err := io.ReadFull(r, h[:16]); err != nil {
		return Size{}, err
	}
	if string(h[12:16]) != "IHDR" {
		return Size{}, errors.New("its first chunk is not IHDR")
	}
	if _, err := io.ReadFull(r, h[16:]); err != nil {
		return Size{}, err
	}
	if n := binary.BigEndian.Uint32(h[8:12]); n != 13 {
		return Size{}, fmt.Errorf("its IHDR chunk is %d bytes long, not 13", n)
	}
	if crc32.ChecksumIEEE(h[12:29]) != binary.BigEndian.Uint32(h[29:33]) {
		return Size{}, errors.New("its IHDR chunk's CRC does not match its content")
	}
	w, hgt := binary.BigEndian.Uint32(h[16:20]), binary.BigEndian.Uint32(h[20:24])
	depth, colour := h[24], h[25]
	depths, known := pngBitDepths[colour]
	switch {
	case !known:
		return Size{}, fmt.Errorf("its colour type %d is none of PNG's (0, 2, 3, 4, 6)", colour)
	case !bytes.Contains(depths, []byte{depth}):
		return Size{}, fmt.Errorf("its bit depth %d is not one colour type %d allows (%s)", depth, colour, joinBytes(depths))
	case h[26] != 0:
		return Size{}, fmt.Errorf("its compression method %d is not PNG's (0)", h[26])
	case h[27] != 0:
		return Size{}, fmt.Errorf("its filter method %d is not PNG's (0)", h[27])
	case h[28] > 1:
		return Size{}, fmt.Errorf("its interlace method %d is neither 0 (none) nor 1 (Adam7)", h[28])
	case w > math.MaxInt32 || hgt > math.MaxInt32:
		// The specification's own bound: sizes are 31-bit numbers.
		return Size{}, fmt.Errorf("its header gives a size of %d by %d pixels; an image is 1 to %d pixels a side", w, hgt, MaxSide)
	}
	return Size{int(w), int(hgt)}, nil
}

// joinBytes writes small numbers as "1, 2, 4".
func joinBytes(b []byte) string {
	s := make([]string, len(b))
	for i, v := range b {
		s[i] = strconv.Itoa(int(v))
	}
	return strings.Join(s, ", ")
}

func gifSize(r *bufio.Reader) (Size, error) {
	var h [10]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return Size{}, err
	}
	return Size{int(binary.LittleEndian.Uint16(h[6:8])), int(binary.LittleEndian.Uint16(h[8:10]))}, nil
}

// jpegSize walks the markers to the frame header, noting the EXIF
// orientation on the way: orientations 5 to 8 turn the image a quarter.
func jpegSize(r *bufio.Reader) (Size, error) {
	var soi [2]byte
	if _, err := io.ReadFull(r, soi[:]); err != nil {
		return Size{}, err
	}
	orientation := 1
	read := 0
	for {
		c, err := r.ReadByte()
		if err != nil {
			return Size{}, err
		}
		if c != 0xff {
			return Size{}, fmt.Errorf("byte 0x%02x where a marker should start", c)
		}
		for c == 0xff { // fill bytes
			if c, err = r.ReadByte(); err != nil {
				return Size{}, err
			}
		}
		marker := c
		switch {
		case marker == 0xd8 || marker == 0x01 || (marker >= 0xd0 && marker <= 0xd7):
			continue // no length
		case marker == 0xd9 || marker == 0xda:
			return Size{}, errors.New("its image data starts before its frame header")
		}
		var l [2]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return Size{}, err
		}
		n := int(binary.BigEndian.Uint16(l[:])) - 2
		if n < 0 {
			return Size{}, errors.New("a segment has a length below 2")
		}
		if read += n; read > MaxHeader {
			return Size{}, fmt.Errorf("no frame header within its first %d bytes", MaxHeader)
		}
		switch {
		case marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc:
			var f [5]byte
			if n < 5 {
				return Size{}, errors.New("its frame header is too short")
			}
			if _, err := io.ReadFull(r, f[:]); err != nil {
				return Size{}, err
			}
			s := Size{Width: int(binary.BigEndian.Uint16(f[3:5])), Height: int(binary.BigEndian.Uint16(f[1:3]))}
			if orientation >= 5 && orientation <= 8 {
				s.Width, s.Height = s.Height, s.Width
			}
			return s, nil
		case marker == 0xe1 && orientation == 1 && n >= 14:
			seg := make([]byte, n)
			if _, err := io.ReadFull(r, seg); err != nil {
				return Size{}, err
			}
			if bytes.HasPrefix(seg, []byte("Exif\x00\x00")) {
				orientation = exifOrientation(seg[6:])
			}
		default:
			if _, err := r.Discard(n); err != nil {
				return Size{}, err
			}
		}
	}
}

// exifOrientation reads tag 0x0112 of IFD0 of a TIFF structure; 1 (as
// stored) when it is absent or unreadable.
func exifOrientation(tiff []byte) int {
	if len(tiff) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(tiff[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	ifd := int(bo.Uint32(tiff[4:8]))
	if ifd < 8 || ifd+2 > len(tiff) {
		return 1
	}
	count := int(bo.Uint16(tiff[ifd : ifd+2]))
	for i := range count {
		e := ifd + 2 + 12*i
		if e+12 > len(tiff) {
			return 1
		}
		if bo.Uint16(tiff[e:e+2]) == 0x0112 && bo.Uint16(tiff[e+2:e+4]) == 3 {
			if o := int(bo.Uint16(tiff[e+8 : e+10])); o >= 1 && o <= 8 {
				return o
			}
			return 1
		}
	}
	return 1
}

func webpSize(r *bufio.Reader) (Size, error) {
	var h [30]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return Size{}, err
	}
	p := h[20:]
	switch string(h[12:16]) {
	case "VP8 ":
		if p[3] != 0x9d || p[4] != 0x01 || p[5] != 0x2a {
			return Size{}, errors.New("its VP8 frame has no start code")
		}
		return Size{int(binary.LittleEndian.Uint16(p[6:8]) & 0x3fff), int(binary.LittleEndian.Uint16(p[8:10]) & 0x3fff)}, nil
	case "VP8L":
		if p[0] != 0x2f {
			return Size{}, errors.New("its VP8L bitstream has no signature")
		}
		bits := binary.LittleEndian.Uint32(p[1:5])
		return Size{int(bits&0x3fff) + 1, int(bits>>14&0x3fff) + 1}, nil
	case "VP8X":
		w := int(p[4]) | int(p[5])<<8 | int(p[6])<<16
		hgt := int(p[7]) | int(p[8])<<8 | int(p[9])<<16
		return Size{w + 1, hgt + 1}, nil
	}
	return Size{}, fmt.Errorf("its first chunk is %q, not VP8, VP8L or VP8X", h[12:16])
}

// box is an ISO base media box: its type and its payload's length.
type box struct {
	typ string
	n   int64
}

func readBox(r io.Reader) (box, error) {
	var h [8]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return box{}, err
	}
	size, header := int64(binary.BigEndian.Uint32(h[:4])), int64(8)
	switch size {
	case 1:
		var l [8]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return box{}, err
		}
		size, header = int64(binary.BigEndian.Uint64(l[:])), 16 //nolint:gosec // G115: checked against the header below
	case 0:
		size = math.MaxInt64 // to the end of the file
	}
	if size < header {
		return box{}, fmt.Errorf("a %q box is shorter than its header", h[4:8])
	}
	return box{string(h[4:8]), size - header}, nil
}

// children splits a container's payload into its boxes.
func children(b []byte) map[string][]byte {
	out := map[string][]byte{}
	for len(b) >= 8 {
		size := int(binary.BigEndian.Uint32(b[:4]))
		if size < 8 || size > len(b) {
			break
		}
		typ := string(b[4:8])
		if _, seen := out[typ]; !seen {
			out[typ] = b[8:size]
		}
		b = b[size:]
	}
	return out
}

// avifSize finds the primary item's ispe (image spatial extents) property,
// turned by its irot, in the meta box before the media data.
func avifSize(r *bufio.Reader) (Size, error) {
	var meta []byte
	for meta == nil {
		b, err := readBox(r)
		if err != nil {
			return Size{}, err
		}
		switch {
		case b.typ == "meta":
			if b.n > MaxHeader {
				return Size{}, fmt.Errorf("its meta box is larger than %d bytes", MaxHeader)
			}
			meta = make([]byte, b.n)
			if _, err := io.ReadFull(r, meta); err != nil {
				return Size{}, err
			}
		case b.typ == "mdat":
			return Size{}, errors.New("its media data comes before its meta box")
		case b.n > MaxHeader:
			return Size{}, fmt.Errorf("a %q box of %d bytes before its meta box", b.typ, b.n)
		default:
			if _, err := r.Discard(int(b.n)); err != nil {
				return Size{}, err
			}
		}
	}
	if len(meta) < 4 {
		return Size{}, errors.New("its meta box is empty")
	}
	boxes := children(meta[4:]) // after the full box's version and flags
	pitm := boxes["pitm"]
	if len(pitm) < 6 {
		return Size{}, errors.New("it names no primary item (pitm)")
	}
	primary := uint32(binary.BigEndian.Uint16(pitm[4:6]))
	if pitm[0] != 0 && len(pitm) >= 8 {
		primary = binary.BigEndian.Uint32(pitm[4:8])
	}
	iprp := children(boxes["iprp"])
	props := iprp["ipco"]
	var list [][]byte // the properties in order; index 1 is the first
	var types []string
	for len(props) >= 8 {
		size := int(binary.BigEndian.Uint32(props[:4]))
		if size < 8 || size > len(props) {
			break
		}
		types = append(types, string(props[4:8]))
		list = append(list, props[8:size])
		props = props[size:]
	}
	indices, err := associations(iprp["ipma"], primary)
	if err != nil {
		return Size{}, err
	}
	var (
		s       Size
		found   bool
		quarter bool
	)
	for _, i := range indices {
		if i < 1 || i > len(list) {
			continue
		}
		p := list[i-1]
		switch types[i-1] {
		case "ispe":
			if len(p) >= 12 && !found {
				s, found = Size{int(binary.BigEndian.Uint32(p[4:8])), int(binary.BigEndian.Uint32(p[8:12]))}, true
			}
		case "irot":
			if len(p) >= 1 {
				quarter = p[0]&3 == 1 || p[0]&3 == 3
			}
		}
	}
	if !found {
		return Size{}, errors.New("its primary item has no ispe property")
	}
	if quarter {
		s.Width, s.Height = s.Height, s.Width
	}
	return s, nil
}

// associations returns the property indices an ipma box gives item.
func associations(ipma []byte, item uint32) ([]int, error) {
	if len(ipma) < 8 {
		return nil, errors.New("it has no item property associations (ipma)")
	}
	version, flags := ipma[0], ipma[3]
	count := int(binary.BigEndian.Uint32(ipma[4:8]))
	b := ipma[8:]
	for range count {
		var id uint32
		if version < 1 {
			if len(b) < 2 {
				break
			}
			id, b = uint32(binary.BigEndian.Uint16(b)), b[2:]
		} else {
			if len(b) < 4 {
				break
			}
			id, b = binary.BigEndian.Uint32(b), b[4:]
		}
		if len(b) < 1 {
			break
		}
		n := int(b[0])
		b = b[1:]
		var out []int
		for range n {
			if flags&1 != 0 {
				if len(b) < 2 {
					return nil, errors.New("its ipma box is cut short")
				}
				out, b = append(out, int(binary.BigEndian.Uint16(b)&0x7fff)), b[2:]
			} else {
				if len(b) < 1 {
					return nil, errors.New("its ipma box is cut short")
				}
				out, b = append(out, int(b[0]&0x7f)), b[1:]
			}
		}
		if id == item {
			return out, nil
		}
	}
	return nil, errors.New("its primary item has no properties")
}

// svgSize reads the root element's width and height (in pixels or an
// absolute unit), or else its viewBox.
func svgSize(r io.Reader) (Size, error) {
	d := xml.NewDecoder(io.LimitReader(r, MaxHeader))
	d.Strict = false
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	for {
		tok, err := d.RawToken()
		if err != nil {
			return Size{}, errors.New("it has no svg root element within its first MiB")
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		var w, h, vw, vh float64
		for _, a := range el.Attr {
			switch a.Name.Local {
			case "width":
				w = svgLength(a.Value)
			case "height":
				h = svgLength(a.Value)
			case "viewBox":
				f := strings.FieldsFunc(a.Value, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' || r == '\n' || r == '\r' })
				if len(f) == 4 {
					vw, _ = strconv.ParseFloat(f[2], 64)
					vh, _ = strconv.ParseFloat(f[3], 64)
				}
			}
		}
		switch {
		case w > 0 && h > 0:
		case w > 0 && vw > 0 && vh > 0:
			h = w * vh / vw
		case h > 0 && vw > 0 && vh > 0:
			w = h * vw / vh
		case vw > 0 && vh > 0:
			w, h = vw, vh
		default:
			return Size{}, ErrNoSize
		}
		if w > math.MaxInt32 || h > math.MaxInt32 {
			return Size{}, ErrNoSize
		}
		return Size{max(1, int(math.Round(w))), max(1, int(math.Round(h)))}, nil
	}
}

// svgUnits are the absolute CSS units, in pixels.
var svgUnits = map[string]float64{"": 1, "px": 1, "in": 96, "cm": 96 / 2.54, "mm": 96 / 25.4, "pt": 96.0 / 72, "pc": 16}

// svgLength reads a length in pixels; 0 for a relative one (%, em) or
// none.
func svgLength(v string) float64 {
	v = strings.TrimSpace(v)
	i := strings.IndexFunc(v, func(r rune) bool {
		return (r < '0' || r > '9') && r != '.' && r != '-' && r != '+' && r != 'e' && r != 'E'
	})
	num, unit := v, ""
	if i >= 0 {
		num, unit = v[:i], strings.ToLower(v[i:])
	}
	f, err := strconv.ParseFloat(num, 64)
	scale, known := svgUnits[unit]
	if err != nil || !known || f <= 0 || math.IsInf(f, 0) {
		return 0
	}
	return f * scale
}
