package report

import (
	"bytes"
	"fmt"
	"math"
	"strconv"

	"github.com/go-pdf/fpdf"

	"github.com/atrium-hq/atrium/platform/chart"
)

// The PDF is drawn with fpdf's core Helvetica (no font file to embed, and
// its text is real text: a reader selects and copies it, pdftotext reads
// it). Charts are fpdf lines and rectangles with their figures written
// beside them as text, so a chart's numbers are in the text too.

const (
	pageW, margin = 210.0, 15.0
	contentW      = pageW - 2*margin
	pageBottom    = 297.0 - 18
)

type rgb struct{ r, g, b int }

func parseHex(s string) rgb {
	v, _ := strconv.ParseUint(s[1:], 16, 32)
	return rgb{int(v >> 16 & 0xff), int(v >> 8 & 0xff), int(v & 0xff)}
}

type pdfDoc struct {
	*fpdf.Fpdf
	tr              func(string) string
	primary, accent rgb
}

// PDF renders the report as an A4 PDF with the same figures as HTML.
func PDF(f Figures, b Branding) ([]byte, error) {
	p, a := b.colours()
	d := &pdfDoc{Fpdf: fpdf.New("P", "mm", "A4", ""), primary: parseHex(p), accent: parseHex(a)}
	d.tr = d.UnicodeTranslatorFromDescriptor("") // cp1252: what the core fonts can show
	d.SetTitle(f.Title, true)
	d.SetAuthor(b.Name, true)
	d.SetCreationDate(f.Generated)
	d.SetModificationDate(f.Generated)
	d.SetMargins(margin, margin, margin)
	d.SetAutoPageBreak(true, 18)
	d.SetFooterFunc(func() {
		d.SetY(-12)
		d.SetFont("Helvetica", "", 8)
		d.SetTextColor(110, 110, 110)
		d.CellFormat(0, 5, d.tr(fmt.Sprintf("%s - %s - page %d", b.Name, f.Title, d.PageNo())), "", 0, "C", false, 0, "")
	})
	d.AddPage()
	d.masthead(f, b)
	if f.Narrative != "" {
		d.heading("Summary")
		d.SetFont("Helvetica", "", 10)
		for _, para := range paragraphs(f.Narrative) {
			d.MultiCell(0, 5, d.tr(para), "", "L", false)
			d.Ln(2)
		}
	}
	if r := f.Rankings; r != nil {
		d.heading("Rankings")
		d.figures([][2]string{{"Keywords tracked", strconv.Itoa(r.Tracked)}, {"Average position", Num(r.AvgBefore) + " to " + Num(r.AvgAfter)}, {"Improved", strconv.Itoa(r.Improved)}, {"Declined", strconv.Itoa(r.Declined)}, {"In the top 10", strconv.Itoa(r.Top10)}})
		d.lineChart("Average position by day", r.Trend)
		d.movers("Winners", r.Winners)
		d.movers("Losers", r.Losers)
	}
	if a := f.Audit; a != nil {
		d.heading("Site audit")
		d.figures([][2]string{{"Pages audited", strconv.Itoa(a.Pages)}, {"Average score", Num(a.AvgScore)}, {"Issues open", strconv.Itoa(a.Issues)}, {"Audits this period", strconv.Itoa(a.InPeriod)}})
		var labels []string
		var values []float64
		rows := [][]string{}
		for _, pg := range a.Worst {
			rows = append(rows, []string{pg.URL, Num(pg.Score), strconv.Itoa(pg.Issues)})
		}
		for _, pg := range a.Worst[:min(maxBarItems, len(a.Worst))] {
			labels, values = append(labels, pg.URL), append(values, pg.Score)
		}
		d.barChart("Audit score by page", labels, values, 100)
		d.table([]string{"Page", "Score", "Issues"}, []float64{130, 25, 25}, rows)
	}
	if l := f.Backlinks; l != nil {
		d.heading("Backlinks")
		d.figures([][2]string{{"Backlinks", strconv.Itoa(l.Total)}, {"New this period", strconv.Itoa(l.New)}, {"Referring domains", strconv.Itoa(l.Domains)}})
		d.barChart("Backlinks by referring domain", countLabels(l.TopDomains), countValues(l.TopDomains), 0)
		rows := [][]string{}
		for _, k := range l.NewLinks {
			rows = append(rows, []string{k.Source, k.Target, Num(k.Authority)})
		}
		d.table([]string{"New backlink", "To", "Authority"}, []float64{85, 70, 25}, rows)
	}
	if ps := f.Posts; ps != nil {
		d.heading("Google Business Profile posts")
		d.figures([][2]string{{"Posts this period", strconv.Itoa(ps.Count)}, {"Published", strconv.Itoa(ps.Published)}})
		rows := [][]string{}
		for _, p := range ps.Listed {
			rows = append(rows, []string{p.Date, p.Title, p.Status})
		}
		d.table([]string{"Date", "Post", "Status"}, []float64{25, 130, 25}, rows)
	}
	if l := f.LLM; l != nil {
		d.heading("Answer-engine visibility")
		d.figures([][2]string{{"Checks", strconv.Itoa(l.Checks)}, {"Mentioned in", strconv.Itoa(l.Mentioned)}, {"Average visibility", Num(l.AvgVisibility)}})
		var labels []string
		var values []float64
		for _, p := range l.Prompts[:min(maxBarItems, len(l.Prompts))] {
			labels, values = append(labels, p.Prompt), append(values, p.Visibility)
		}
		d.barChart("Visibility by prompt", labels, values, 100)
	}
	if w := f.Work; w != nil {
		d.heading("Work done")
		d.figures([][2]string{{"Actions run", strconv.Itoa(w.Runs)}, {"AI credits", strconv.FormatInt(w.AI, 10)}, {"Data credits", strconv.FormatInt(w.Data, 10)}})
		rows := [][]string{}
		for _, c := range w.ByAction {
			rows = append(rows, []string{c.Label, strconv.Itoa(c.N)})
		}
		d.table([]string{"Action", "Runs"}, []float64{150, 30}, rows)
	}
	var buf bytes.Buffer
	if err := d.Output(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (d *pdfDoc) fill(c rgb) { d.SetFillColor(c.r, c.g, c.b) }
func (d *pdfDoc) draw(c rgb) { d.SetDrawColor(c.r, c.g, c.b) }

// Logo sizes in the PDF's header, in millimetres: a fixed height, the
// width following the image's proportions up to a maximum.
const (
	logoH    = 16.0
	logoMaxW = 60.0
	logoPad  = 1.5
)

func (d *pdfDoc) masthead(f Figures, b Branding) {
	d.fill(d.primary)
	d.Rect(0, 0, pageW, 38, "F")
	// The text keeps clear of the logo.
	tw := contentW
	if w := d.drawLogo(b); w > 0 {
		tw -= w + 2*logoPad + 4
	}
	d.SetXY(margin, 8)
	d.SetFont("Helvetica", "B", 11)
	d.SetTextColor(d.accent.r, d.accent.g, d.accent.b)
	d.CellFormat(tw, 6, d.fit(d.tr(b.Name), tw), "", 1, "L", false, 0, "")
	d.SetFont("Helvetica", "B", 18)
	d.SetTextColor(255, 255, 255)
	d.CellFormat(tw, 9, d.fit(d.tr(f.Title), tw), "", 1, "L", false, 0, "")
	d.SetFont("Helvetica", "", 10)
	client := f.Client
	if f.Domain != "" {
		client += " (" + f.Domain + ")"
	}
	d.CellFormat(tw, 6, d.fit(d.tr(fmt.Sprintf("%s - %s (%s to %s)", client, f.Period.Label, f.Period.First, f.Period.Last)), tw), "", 1, "L", false, 0, "")
	d.SetY(44)
	d.SetTextColor(27, 27, 27)
}

func (d *pdfDoc) need(h float64) {
	if d.GetY()+h > pageBottom {
		d.AddPage()
	}
}

func (d *pdfDoc) heading(s string) {
	d.need(30)
	d.Ln(3)
	d.SetFont("Helvetica", "B", 14)
	d.SetTextColor(d.primary.r, d.primary.g, d.primary.b)
	d.CellFormat(0, 8, d.tr(s), "", 1, "L", false, 0, "")
	d.draw(d.accent)
	d.SetLineWidth(0.8)
	y := d.GetY()
	d.Line(margin, y, margin+contentW, y)
	d.SetLineWidth(0.2)
	d.Ln(3)
	d.SetTextColor(27, 27, 27)
}

// figures writes label and value pairs in boxes, five to a row.
func (d *pdfDoc) figures(kv [][2]string) {
	const per = 5
	w := contentW / per
	for i := 0; i < len(kv); i += per {
		d.need(16)
		y := d.GetY()
		for j, p := range kv[i:min(i+per, len(kv))] {
			x := margin + float64(j)*w
			d.draw(rgb{210, 210, 210})
			d.Rect(x, y, w-2, 14, "D")
			d.SetXY(x+2, y+1)
			d.SetFont("Helvetica", "", 7.5)
			d.SetTextColor(90, 90, 90)
			d.CellFormat(w-4, 4, d.tr(p[0]), "", 2, "L", false, 0, "")
			d.SetFont("Helvetica", "B", 12)
			d.SetTextColor(27, 27, 27)
			d.CellFormat(w-4, 7, d.tr(p[1]), "", 0, "L", false, 0, "")
		}
		d.SetXY(margin, y+16)
	}
}

// table writes rows under a header; cells are cut to their width.
func (d *pdfDoc) table(head []string, widths []float64, rows [][]string) {
	if len(rows) == 0 {
		return
	}
	row := func(cells []string, bold bool) {
		d.need(6)
		style := ""
		if bold {
			style = "B"
		}
		d.SetFont("Helvetica", style, 8.5)
		for i, c := range cells {
			d.CellFormat(widths[i], 5.5, d.fit(d.tr(c), widths[i]-2), "B", 0, "L", false, 0, "")
		}
		d.Ln(-1)
	}
	d.draw(rgb{220, 220, 220})
	row(head, true)
	for _, r := range rows {
		row(r, false)
	}
	d.Ln(3)
}

// fit cuts s to w millimetres in the current font.
func (d *pdfDoc) fit(s string, w float64) string {
	if d.GetStringWidth(s) <= w {
		return s
	}
	for len(s) > 1 && d.GetStringWidth(s+"...") > w {
		s = s[:len(s)-1]
	}
	return s + "..."
}

func (d *pdfDoc) movers(title string, ms []Movement) {
	if len(ms) == 0 {
		return
	}
	d.need(14)
	d.SetFont("Helvetica", "B", 10)
	d.CellFormat(0, 6, title, "", 1, "L", false, 0, "")
	rows := [][]string{}
	for _, m := range ms {
		rows = append(rows, []string{m.Keyword, position(m.Before), position(m.After), signed(m.Change)})
	}
	d.table([]string{"Keyword", "Before", "After", "Change"}, []float64{105, 25, 25, 25}, rows)
}

// barChart draws one horizontal bar per count with its value written at
// the bar's end; max fixes the scale (0: the largest count).
func (d *pdfDoc) barChart(title string, labels []string, values []float64, max float64) {
	if len(labels) == 0 {
		return
	}
	const labelW, barH = 60.0, 5.0
	scale := max
	for _, v := range values {
		scale = math.Max(scale, v)
	}
	if scale == 0 {
		scale = 1
	}
	d.need(8 + float64(len(labels))*(barH+1.5))
	d.SetFont("Helvetica", "B", 9)
	d.CellFormat(0, 6, d.tr(title), "", 1, "L", false, 0, "")
	plotW := contentW - labelW - 18
	for i, label := range labels {
		y := d.GetY()
		d.SetFont("Helvetica", "", 8)
		d.SetXY(margin, y)
		d.CellFormat(labelW, barH, d.fit(d.tr(label), labelW-2), "", 0, "R", false, 0, "")
		w := plotW * math.Max(values[i], 0) / scale
		d.fill(d.primary)
		if w > 0 {
			d.Rect(margin+labelW, y+0.5, w, barH-1, "F")
		}
		d.SetXY(margin+labelW+w+1, y)
		d.CellFormat(16, barH, Num(values[i]), "", 0, "L", false, 0, "")
		d.SetXY(margin, y+barH+1.5)
	}
	d.Ln(3)
}

// lineChart draws a series of points (positions: 1 at the top) with the
// axis range and the first and last values written as text.
func (d *pdfDoc) lineChart(title string, pts []chart.Point) {
	if len(pts) == 0 {
		return
	}
	const h = 50.0
	d.need(h + 18)
	d.SetFont("Helvetica", "B", 9)
	d.CellFormat(0, 6, d.tr(title), "", 1, "L", false, 0, "")
	x0, y0, w := margin+14, d.GetY()+2, contentW-20
	lo, hi := pts[0].Y, pts[0].Y
	for _, p := range pts {
		lo, hi = math.Min(lo, p.Y), math.Max(hi, p.Y)
	}
	if hi == lo {
		hi, lo = hi+1, math.Max(lo-1, 0)
	}
	d.draw(rgb{180, 180, 180})
	d.Rect(x0, y0, w, h, "D")
	d.SetFont("Helvetica", "", 7.5)
	d.SetXY(margin, y0-2)
	d.CellFormat(13, 4, Num(round1(lo)), "", 0, "R", false, 0, "")
	d.SetXY(margin, y0+h-2)
	d.CellFormat(13, 4, Num(round1(hi)), "", 0, "R", false, 0, "")
	t0, t1 := pts[0].X, pts[len(pts)-1].X
	span := t1.Sub(t0).Seconds()
	xy := func(p chart.Point) (float64, float64) {
		fx := 0.5
		if span > 0 {
			fx = p.X.Sub(t0).Seconds() / span
		}
		return x0 + fx*w, y0 + (p.Y-lo)/(hi-lo)*h // inverted: the best position on top
	}
	d.draw(d.accent)
	d.SetLineWidth(0.6)
	for i := 1; i < len(pts); i++ {
		ax, ay := xy(pts[i-1])
		bx, by := xy(pts[i])
		d.Line(ax, ay, bx, by)
	}
	d.SetLineWidth(0.2)
	d.SetXY(x0, y0+h+1)
	first, last := pts[0], pts[len(pts)-1]
	d.CellFormat(w/2, 4, first.X.Format(dateLayout)+": "+Num(first.Y), "", 0, "L", false, 0, "")
	d.CellFormat(w/2, 4, last.X.Format(dateLayout)+": "+Num(last.Y), "", 1, "R", false, 0, "")
	d.Ln(3)
}

// drawLogo draws the branding's logo at the header's right, on a white
// ground (a logo is made for a light page), scaled to logoH high. A logo
// that cannot be drawn is left out and the report keeps its name only:
// the logo never fails a report. It returns the logo's width, 0 when none
// is drawn.
func (d *pdfDoc) drawLogo(b Branding) (width float64) {
	data, size, ok := b.pdfLogo()
	if !ok || !d.registerLogo(data) {
		return 0
	}
	h := logoH
	w := h * float64(size.X) / float64(size.Y)
	if w > logoMaxW {
		w, h = logoMaxW, logoMaxW*float64(size.Y)/float64(size.X)
	}
	x, y := pageW-margin-w, 19-h/2
	d.SetFillColor(255, 255, 255)
	d.Rect(x-logoPad, y-logoPad, w+2*logoPad, h+2*logoPad, "F")
	d.ImageOptions("logo", x, y, w, h, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	return w
}

// registerLogo hands fpdf the logo's PNG, reporting whether it took it.
// fpdf only sees PNGs Go encoded, but a parser's panic must still not
// fail the report, nor its error state stop the rest of the document.
func (d *pdfDoc) registerLogo(data []byte) (ok bool) {
	defer func() {
		if recover() != nil {
			d.ClearError()
			ok = false
		}
	}()
	info := d.RegisterImageOptionsReader("logo", fpdf.ImageOptions{ImageType: "PNG"}, bytes.NewReader(data))
	if d.Err() || info == nil {
		d.ClearError()
		return false
	}
	return true
}
