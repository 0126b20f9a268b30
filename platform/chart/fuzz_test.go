package chart

import (
	"encoding/binary"
	"html/template"
	"math"
	"strings"
	"testing"
	"time"
)

// FuzzLine draws whatever values and times the fuzzer finds: every result
// must be well-formed, carry no NaN or Inf in a coordinate and never panic.
func FuzzLine(f *testing.F) {
	f.Add([]byte{}, "kw", uint8(0), false)
	f.Add([]byte("\x00\x00\x00\x00\x00\x00\xf8\x7f\x00\x00\x00\x00\x00\x00\xf0\x7f"), "<b>&", uint8(3), true)
	f.Add(make([]byte, 80), "", uint8(255), false)
	f.Fuzz(func(t *testing.T, data []byte, name string, nSeries uint8, invert bool) {
		var ys []float64
		for len(data) >= 8 {
			ys = append(ys, math.Float64frombits(binary.LittleEndian.Uint64(data)))
			data = data[8:]
		}
		series := make([]Series, int(nSeries)%12+1)
		for i, y := range ys {
			s := &series[i%len(series)]
			s.Name = name
			// Times from the values too: repeated, unordered, far apart.
			sec := int64(math.Float64bits(y) % (1 << 40))
			s.Points = append(s.Points, Point{X: time.Unix(sec, 0).UTC(), Y: y})
		}
		o := Options{InvertY: invert, Title: name}
		if len(ys) > 1 && ys[0] < ys[1] {
			o.YMin, o.YMax = &ys[0], &ys[1]
		}
		for _, out := range []string{string(Line(series, o)), string(Table(series, o)), string(Sparkline(ys, o)), string(Bars([]string{name}, ys, o))} {
			root := parse(t, toHTML(out))
			if strings.Contains(root.text(), "\x00") {
				t.Fatal("a NUL reached the output")
			}
		}
	})
}

func toHTML(s string) template.HTML { return template.HTML(s) } //nolint:gosec // G203: the package's own output, read back
