// Package chart draws the charts of Atrium Studio, the web console, and of
// the client reports (generate_report in the actions service), on the
// server: keyword positions over time, audit scores, backlink counts and
// LLM visibility, as SVG that html/template pages embed as they are.
//
// Why on the server: the console runs under a strict Content Security
// Policy (no inline script, no inline style), so a chart cannot be drawn by
// a script in the page, and a chart that arrives in the HTML is readable
// before any script runs, in a shared report and in a PDF.
//
// What it promises:
//
//   - Every piece of text comes from users' data (series names, labels) and
//     is escaped; the output is well-formed XML and carries no style
//     attribute, no <style> and no <script>. Colours are SVG presentation
//     attributes, so a chart reads right even without the stylesheet, and
//     the classes (all prefixed "chart-") let the console's stylesheet,
//     which includes [CSS], restyle it.
//   - A chart is an image with an accessible name and description
//     (role="img", <title>, <desc>); [Table] gives the same numbers as an
//     HTML table for screen readers and for people who prefer numbers.
//   - Series are told apart by colour and by dash pattern, so colour is
//     never the only cue; colours keep 3:1 against white and text 4.5:1
//     (WCAG AA).
//   - The SVG scales to its container (viewBox, width="100%"); its text is
//     sized so that it stays at least 11 px tall on a 360 px wide phone.
//   - No input panics: no series, no points, one point, equal values, NaN
//     and ±Inf (left out), huge series (reduced to about 500 points each,
//     keeping every bucket's minimum and maximum so peaks survive).
package chart
