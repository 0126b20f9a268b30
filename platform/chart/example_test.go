package chart_test

import (
	"fmt"
	"html/template"
	"os"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/platform/chart"
)

// A console page shows a keyword's positions as a chart, with the numbers
// in a <details> for those who prefer them. The page's stylesheet includes
// chart.CSS.
func Example() {
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	positions := chart.Series{Name: "seo tools", Points: []chart.Point{
		{X: day, Y: 14}, {X: day.AddDate(0, 0, 1), Y: 9}, {X: day.AddDate(0, 0, 2), Y: 4},
	}}
	o := chart.Options{Title: "Positions in March", YLabel: "Position", InvertY: true}

	page := template.Must(template.New("page").Parse(
		`<figure>{{.Chart}}<details><summary>Numbers</summary>{{.Table}}</details></figure>`))
	var out strings.Builder
	err := page.Execute(&out, map[string]template.HTML{
		"Chart": chart.Line([]chart.Series{positions}, o),
		"Table": chart.Table([]chart.Series{positions}, o),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	html := out.String()
	fmt.Println(strings.Contains(html, `<svg xmlns="http://www.w3.org/2000/svg" class="chart-svg chart-line"`))
	fmt.Println(strings.Contains(html, `<title>seo tools: 4 on 3 Mar 2026</title>`))
	fmt.Println(strings.Contains(html, `<caption>Positions in March</caption>`))
	// Output:
	// true
	// true
	// true
}
