package pngimage

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"

	"github.com/atrium-hq/atrium/platform/apperr"
)

const (
	// maxTitleLines is the most lines a title is wrapped over; more would
	// no longer read as a headline.
	maxTitleLines = 4
	// maxTextRunes bounds the text laid out, and so the work of laying it
	// out, whatever the caller sends. Neither four lines of title nor one
	// line of subtitle holds that many characters at any allowed size.
	maxTextRunes = 2000
	// shrinkStep is the factor the title's size shrinks by at each try.
	shrinkStep = 0.9
	ellipsis   = "…"
)

// layout is where the text of an image goes: left-aligned in the area
// inside the margins, the title's lines and the subtitle's one line as a
// block centred vertically.
type layout struct {
	area     image.Rectangle
	title    textBlock
	subtitle textBlock // no lines: no subtitle
}

// textBlock is lines of one font and size.
type textBlock struct {
	font      *opentype.Font
	size      float64
	lines     []string
	baselines []int // y of each line's baseline
}

// layOut fits the title in at most maxTitleLines lines, shrinking it step
// by step from its starting size down to its minimum, and cutting it with
// an ellipsis only if it does not fit at the minimum.
func (r *Renderer) layOut(th *theme, title, subtitle string, w, h int) (*layout, error) {
	mx, my := margins(w, h)
	area := image.Rect(mx, my, w-mx, h-my)
	// Sizes follow the height, unless the image is so narrow that the
	// width has to set them.
	base := math.Min(float64(h)*0.115, float64(w)*0.07)
	start := base * th.titleScale
	minSize := math.Max(10, start*0.45)
	lay := &layout{area: area}

	// The subtitle's line is set first: the title gets the height left.
	availH, subH, gap := area.Dy(), 0, 0
	if subWords, subCut := words(subtitle); len(subWords) > 0 {
		size := math.Max(10, base*0.42)
		face, err := newFace(r.regular, size)
		if err != nil {
			return nil, err
		}
		line := strings.Join(subWords, " ")
		maxW := lineWidth(area.Dx(), size)
		if subCut || font.MeasureString(face, line) > maxW {
			line = ellipsize(face, line, maxW)
		}
		m := face.Metrics()
		subH = m.Ascent.Ceil() + m.Descent.Ceil()
		gap = int(math.Round(size * 0.9))
		availH -= subH + gap
		lay.subtitle = textBlock{font: r.regular, size: size, lines: []string{line}}
	}

	titleWords, cut := words(title)
	if len(titleWords) == 0 {
		return nil, apperr.Invalid("the image's title has no characters to draw")
	}
	var (
		face          font.Face
		lines         []string
		asc, lineStep int
	)
	for size := start; ; size *= shrinkStep {
		size = math.Max(size, minSize)
		var err error
		if face, err = newFace(r.bold, size); err != nil {
			return nil, err
		}
		maxW := lineWidth(area.Dx(), size)
		lines = wrap(face, titleWords, maxW, maxTitleLines+1)
		m := face.Metrics()
		asc, lineStep = m.Ascent.Ceil(), int(math.Round(size*1.15))
		height := func(n int) int { return asc + m.Descent.Ceil() + (n-1)*lineStep }
		if !cut && len(lines) <= maxTitleLines && height(len(lines)) <= availH {
			lay.title = textBlock{font: r.bold, size: size, lines: lines}
			break
		}
		if size > minSize {
			continue
		}
		// The title does not fit even at its smallest: keep the lines
		// that fit and end the last with an ellipsis.
		n := maxTitleLines
		for n > 1 && height(n) > availH {
			n--
		}
		if k := min(n, len(lines)); len(lines) > k || cut {
			lines = append(lines[:k-1:k-1], ellipsize(face, lines[k-1], maxW))
		}
		lay.title = textBlock{font: r.bold, size: size, lines: lines}
		break
	}

	// Centre the block vertically.
	titleH := asc + face.Metrics().Descent.Ceil() + (len(lay.title.lines)-1)*lineStep
	blockH := titleH
	if len(lay.subtitle.lines) > 0 {
		blockH += gap + subH
	}
	top := area.Min.Y + max(0, area.Dy()-blockH)/2
	for i := range lay.title.lines {
		lay.title.baselines = append(lay.title.baselines, top+asc+i*lineStep)
	}
	if len(lay.subtitle.lines) > 0 {
		subFace, err := newFace(r.regular, lay.subtitle.size)
		if err != nil {
			return nil, err
		}
		lay.subtitle.baselines = []int{top + titleH + gap + subFace.Metrics().Ascent.Ceil()}
	}
	return lay, nil
}

// draw sets the text in the theme's colours. Drawing is clipped to the
// area inside the margins: the layout keeps the text there already, and the
// clip makes sure no glyph's overhang reaches the margins.
func (lay *layout) draw(img *image.RGBA, th *theme) error {
	clip, ok := img.SubImage(lay.area).(*image.RGBA)
	if !ok {
		return fmt.Errorf("pngimage: clip the text area")
	}
	for _, b := range []struct {
		block textBlock
		color color.Color
	}{{lay.title, th.title}, {lay.subtitle, th.subtitle}} {
		if len(b.block.lines) == 0 {
			continue
		}
		face, err := newFace(b.block.font, b.block.size)
		if err != nil {
			return err
		}
		d := font.Drawer{Dst: clip, Src: image.NewUniform(b.color), Face: face}
		for i, line := range b.block.lines {
			d.Dot = fixed.P(lay.area.Min.X, b.block.baselines[i])
			d.DrawString(line)
		}
	}
	return nil
}

func newFace(f *opentype.Font, size float64) (font.Face, error) {
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		return nil, fmt.Errorf("pngimage: font face of size %.1f: %w", size, err)
	}
	return face, nil
}

// lineWidth is the advance a line of text of size may have in an area
// width wide: a little less, because a glyph's ink can reach past its
// advance.
func lineWidth(width int, size float64) fixed.Int26_6 {
	return fixed.I(width - int(math.Ceil(size*0.06)))
}

// words splits text at white space, dropping characters that have no
// glyph to draw (control characters), after cutting it to maxTextRunes
// runes. cut reports that text was cut.
func words(text string) (w []string, cut bool) {
	if utf8.RuneCountInString(text) > maxTextRunes {
		n := 0
		for i := range text {
			if n == maxTextRunes {
				text, cut = text[:i], true
				break
			}
			n++
		}
	}
	text = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r):
			return ' '
		case !unicode.IsPrint(r):
			return -1
		}
		return r
	}, text)
	return strings.Fields(text), cut
}

// wrap breaks words into lines whose advance is at most maxW: at spaces,
// and inside a word too long for a line of its own. It stops at limit
// lines, so the caller learns the text does not fit without wrapping all
// of it.
func wrap(face font.Face, words []string, maxW fixed.Int26_6, limit int) []string {
	var lines []string
	line := ""
	for _, word := range words {
		if line != "" {
			if font.MeasureString(face, line+" "+word) <= maxW {
				line += " " + word
				continue
			}
			lines = append(lines, line)
			if len(lines) == limit {
				return lines
			}
		}
		for font.MeasureString(face, word) > maxW {
			n := max(longestPrefix(face, word, maxW), len(firstRune(word)))
			lines = append(lines, word[:n])
			if len(lines) == limit {
				return lines
			}
			word = word[n:]
		}
		line = word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// ellipsize cuts s to fit maxW with an ellipsis at its end, at a space if
// the cut falls inside a word that is not the line's only one.
func ellipsize(face font.Face, s string, maxW fixed.Int26_6) string {
	n := longestPrefix(face, s, maxW-font.MeasureString(face, ellipsis))
	cut := s[:n]
	if n < len(s) && s[n] != ' ' {
		if i := strings.LastIndexByte(cut, ' '); i > 0 {
			cut = cut[:i]
		}
	}
	return strings.TrimRight(cut, " ") + ellipsis
}

// longestPrefix returns the length in bytes of the longest prefix of s, cut
// between runes, whose advance is at most maxW. The advance grows with the
// prefix, so a binary search finds it in a logarithmic number of
// measurements.
func longestPrefix(face font.Face, s string, maxW fixed.Int26_6) int {
	var ends []int // ends[k] is the byte length of the first k+1 runes
	for i := range s {
		if i > 0 {
			ends = append(ends, i)
		}
	}
	if s != "" {
		ends = append(ends, len(s))
	}
	lo, hi := 0, len(ends) // the first lo runes fit; more than hi do not
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if font.MeasureString(face, s[:ends[mid-1]]) <= maxW {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if lo == 0 {
		return 0
	}
	return ends[lo-1]
}

func firstRune(s string) string {
	_, n := utf8.DecodeRuneInString(s)
	return s[:n]
}
