package main

import "testing"

// TestSpreadOf: the median of an odd number of rounds is the middle one,
// of an even number the mean of the two middle ones; the range is the
// lowest and the highest, whatever the rounds' order.
func TestSpreadOf(t *testing.T) {
	for _, c := range []struct {
		vals []float64
		want spread
		text string
	}{
		{[]float64{0.87, 1.10, 0.63}, spread{0.87, 0.63, 1.10}, "0.87 (0.63–1.10)"},
		{[]float64{4, 1, 3, 2}, spread{2.5, 1, 4}, "2.50 (1.00–4.00)"},
		{[]float64{7}, spread{7, 7, 7}, "7.00 (7.00–7.00)"},
		{nil, spread{}, "0.00 (0.00–0.00)"},
	} {
		got := spreadOf(c.vals)
		if got != c.want || got.text("%.2f") != c.text {
			t.Errorf("spreadOf(%v) = %+v %q; want %+v %q", c.vals, got, got.text("%.2f"), c.want, c.text)
		}
	}
}
