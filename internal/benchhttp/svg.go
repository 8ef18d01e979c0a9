package main

import (
	"fmt"
	"html"
	"io"
	"math"
)

// series is one line of a chart panel.
type series struct {
	name  string
	color string
	ys    []float64
}

// panel is one chart of the scale figure: users (log scale) across, one or more series up.
type panel struct {
	title, unit string
	series      []series
	// target, when positive, is drawn as a dashed line labelled targetText.
	target     float64
	targetText string
}

const (
	panelW, panelH = 330, 260
	padL, padR     = 52, 14
	padT, padB     = 34, 64
)

// writeScaleSVG draws bench-scale's figures as three panels (build CPU per record, the build's
// peak memory, the serving ratios) over the decades measured.
func writeScaleSVG(w io.Writer, ds []*decade) {
	users := make([]float64, len(ds))
	cpu, rss := make([]float64, len(ds)), make([]float64, len(ds))
	ratios := map[string][]float64{}
	for i, d := range ds {
		users[i] = float64(d.users)
		cpu[i] = d.cpuPerMillion()
		rss[i] = float64(d.peakRSS) / (1 << 30)
		for _, sc := range scaleScenarios {
			ratios[sc] = append(ratios[sc], d.ratios[sc])
		}
	}
	colors := map[string]string{"detail": "#1f77b4", "users": "#2ca02c", "orders": "#ff7f0e", "mix": "#9467bd"}
	labels := map[string]string{"detail": "random detail", "users": "random user list", "orders": "random order list", "mix": "mix"}
	var serving []series
	for _, sc := range scaleScenarios {
		serving = append(serving, series{name: labels[sc], color: colors[sc], ys: ratios[sc]})
	}
	panels := []panel{
		{title: "Build CPU per million records", unit: "CPU s", series: []series{{name: "fixtures build", color: "#d62728", ys: cpu}}},
		{title: "Peak RSS of the build", unit: "GiB", series: []series{{name: "fixtures build", color: "#8c564b", ys: rss}}, target: 2, targetText: "target ≤ 2 GiB"},
		{title: "Serving: req/s ÷ the ceiling's", unit: "× ceiling", series: serving, target: 1, targetText: "ceiling"},
	}
	width := panelW * len(panels)
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", width, panelH, width, panelH)
	fmt.Fprintf(w, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, panelH)
	for i, p := range panels {
		p.draw(w, float64(i*panelW), users)
	}
	fmt.Fprintln(w, "</svg>")
}

// draw writes the panel at x0.
func (p panel) draw(w io.Writer, x0 float64, users []float64) {
	left, right := x0+padL, x0+panelW-padR
	top, bottom := float64(padT), float64(panelH-padB)
	ymax := p.target
	for _, s := range p.series {
		for _, y := range s.ys {
			ymax = math.Max(ymax, y)
		}
	}
	ymax = niceCeil(ymax * 1.1)
	lo, hi := math.Log10(users[0]), math.Log10(users[len(users)-1])
	if hi == lo {
		lo, hi = lo-0.5, hi+0.5
	}
	x := func(u float64) float64 { return left + (math.Log10(u)-lo)/(hi-lo)*(right-left) }
	y := func(v float64) float64 { return bottom - v/ymax*(bottom-top) }
	fmt.Fprintf(w, `<text x="%.1f" y="16" font-size="13" font-weight="bold">%s</text>`+"\n", left-padL+8, html.EscapeString(p.title))
	// Axes, grid and ticks.
	fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", left, bottom, right, bottom)
	fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", left, top, left, bottom)
	for i := 0; i <= 5; i++ { // ymax is 1, 2 or 5 × 10ⁿ: fifths of it are round
		v := ymax * float64(i) / 5
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, y(v), right, y(v))
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-4, y(v)+4, trimFloat(v))
	}
	fmt.Fprintf(w, `<text x="%.1f" y="%.1f" transform="rotate(-90 %.1f %.1f)" text-anchor="middle">%s</text>`+"\n",
		x0+12, (top+bottom)/2, x0+12, (top+bottom)/2, html.EscapeString(p.unit))
	for _, u := range users {
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x(u), bottom+14, shortCount(int(u)))
	}
	fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="middle">users (ten orders each)</text>`+"\n", (left+right)/2, bottom+28)
	if p.target > 0 {
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999" stroke-dasharray="4 3"/>`+"\n", left, y(p.target), right, y(p.target))
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="end" fill="#666">%s</text>`+"\n", right, y(p.target)-3, html.EscapeString(p.targetText))
	}
	// Lines, points and the legend.
	for i, s := range p.series {
		path := ""
		for j, v := range s.ys {
			cmd := "L"
			if j == 0 {
				cmd = "M"
			}
			path += fmt.Sprintf("%s%.1f %.1f ", cmd, x(users[j]), y(v))
		}
		fmt.Fprintf(w, `<path d="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", path, s.color)
		for j, v := range s.ys {
			fmt.Fprintf(w, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s, %s users: %s</title></circle>`+"\n",
				x(users[j]), y(v), s.color, html.EscapeString(s.name), shortCount(int(users[j])), trimFloat(v))
		}
		lx, ly := left+float64(i%2)*130, bottom+42+float64(i/2)*12
		fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="10" height="3" fill="%s"/><text x="%.1f" y="%.1f">%s</text>`+"\n", lx, ly-4, s.color, lx+14, ly, html.EscapeString(s.name))
	}
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func trimFloat(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2g", v)
}
