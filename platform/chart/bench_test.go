package chart

import (
	"fmt"
	"math"
	"testing"
)

// BenchmarkLine5x365 is a year of daily positions for five keywords, the
// common page of the console.
func BenchmarkLine5x365(b *testing.B) {
	var series []Series
	for k := 0; k < 5; k++ {
		s := Series{Name: fmt.Sprintf("keyword %d", k)}
		for i := 0; i < 365; i++ {
			s.Points = append(s.Points, Point{X: day0.AddDate(0, 0, i), Y: math.Max(1, float64(10+k*7)+9*math.Sin(float64(i)/11+float64(k)))})
		}
		series = append(series, s)
	}
	o := Options{Title: "Positions", InvertY: true, YLabel: "Position"}
	var size int
	for b.Loop() {
		size = len(Line(series, o))
	}
	b.ReportMetric(float64(size), "bytes/chart")
}
