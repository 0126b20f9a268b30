// Package report is the client report of generate_report, apart from how
// its figures are read: the reporting period (period.go: last_month,
// last_week or dates, in the client's time zone), the figures worked out
// from dataset rows and runs (figures.go), and the two renderings of the
// same figures, a self-contained HTML page with inline SVG charts
// (platform/chart) and no script (html.go), and a PDF whose text, figures
// included, is selectable (pdf.go); both draw the agency's logo when it
// is a PNG or JPEG that decodes whole, and leave it out otherwise
// (logo.go).
//
// It is pure: no provider, no store. The handler (handlers/reports.go)
// reads the rows, asks the text provider for the narrative and stores the
// files; keeping the arithmetic and the rendering here lets the tests hold
// the figures in both files to the rows they came from.
package report
