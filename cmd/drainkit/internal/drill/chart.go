package drill

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"sort"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// bucket is the chart's time resolution: requests per 100 ms.
const bucket = 100 * time.Millisecond

var (
	colOK      = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	colFail    = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	colServing = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	colDrain   = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}
	colLife    = color.RGBA{R: 0xaa, G: 0xaa, B: 0xaa, A: 0xff}
	colBlack   = color.RGBA{A: 0xff}
)

// drainMark is one kind of drain-step marker on the replica lanes.
type drainMark struct {
	label string
	shape draw.GlyphDrawer
	color color.Color
	at    func(rp ReplicaReport) (time.Duration, bool)
}

// step returns an offset from the run's start for a timeline step.
func step(name string) func(ReplicaReport) (time.Duration, bool) {
	return func(rp ReplicaReport) (time.Duration, bool) {
		if rp.Timeline == nil {
			return 0, false
		}
		off, ok := rp.Timeline.Steps[name]
		return rp.T0 + off, ok
	}
}

var drainMarks = []drainMark{
	{"preStop call", draw.RingGlyph{}, colBlack, func(rp ReplicaReport) (time.Duration, bool) { return rp.PreStop, rp.PreStop >= 0 }},
	{"SIGTERM", draw.TriangleGlyph{}, colBlack, func(rp ReplicaReport) (time.Duration, bool) { return rp.Signalled, rp.Signalled >= 0 }},
	{"not ready", draw.CircleGlyph{}, colDrain, step("not_ready")},
	{"deregistered", draw.SquareGlyph{}, color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, step("deregistered")},
	{"last late arrival", draw.PlusGlyph{}, colFail, func(rp ReplicaReport) (time.Duration, bool) {
		if rp.Timeline == nil || rp.Timeline.LateArrivals == 0 {
			return 0, false
		}
		return rp.T0 + rp.Timeline.LastLateArrival, true
	}},
	{"listeners closed", draw.PyramidGlyph{}, color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}, step("listeners_closed")},
	{"exit", draw.CrossGlyph{}, colBlack, func(rp ReplicaReport) (time.Duration, bool) { return rp.Exited, rp.Exited >= 0 }},
}

// sans switches a plot's text to the sans-serif face of the embedded
// Liberation fonts, which gonum/plot measures text with.
func sans(p *plot.Plot) {
	for _, f := range []*draw.TextStyle{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.Y.Label.TextStyle,
		&p.X.Tick.Label, &p.Y.Tick.Label, &p.Legend.TextStyle} {
		f.Font.Variant = "Sans"
	}
}

// ChartSVG draws one strategy's timeline: requests per 100 ms with failures
// marked (top) and each replica's life and drain steps (bottom), on a time
// axis in seconds from the drill's start that runs to until (at least the
// run's own duration). Give every strategy of a drill the same until (the
// longest run's Duration) and their charts share one scale.
func ChartSVG(run StrategyRun, until time.Duration) ([]byte, error) {
	until = max(until, run.Duration)
	end := until.Seconds()
	// Room on the right for the legends, so that they cover no data.
	xmax := end * 1.2
	ok, failed := perBucket(run.Records, run.Duration)

	top := plot.New()
	sans(top)
	top.Title.Text = run.Name + ": requests per 100 ms"
	top.Y.Label.Text = "requests / 100 ms"
	top.X.Min, top.X.Max = 0, xmax
	top.X.Tick.Marker = secondTicks(end)
	top.Y.Min = 0
	okLine, err := plotter.NewLine(ok)
	if err != nil {
		return nil, err
	}
	okLine.LineStyle.Color = colOK
	okLine.LineStyle.Width = vg.Points(1)
	okLine.StepStyle = plotter.PostStep
	top.Add(plotter.NewGrid(), okLine)
	top.Legend.Add("ok", okLine)
	if len(failed) > 0 {
		marks, err := plotter.NewScatter(failed)
		if err != nil {
			return nil, err
		}
		marks.GlyphStyle = draw.GlyphStyle{Color: colFail, Radius: vg.Points(3.5), Shape: draw.CrossGlyph{}}
		top.Add(marks)
		top.Legend.Add("failed", marks)
	}
	top.Legend.Top = true
	top.Legend.XOffs = vg.Points(-4)

	lanes, err := lanePlot(run, end, xmax)
	if err != nil {
		return nil, err
	}

	const w, h = 11 * vg.Inch, 7 * vg.Inch
	c := vgsvg.New(w, h)
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(4), PadY: vg.Points(8)}
	canvases := plot.Align([][]*plot.Plot{{top}, {lanes}}, tiles, dc)
	top.Draw(canvases[0][0])
	lanes.Draw(canvases[1][0])
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// secondTicks labels the time axis in whole seconds at a step that gives
// at most about 15 labels, up to end (the legends' room right of it stays
// unlabelled).
func secondTicks(end float64) plot.Ticker {
	return plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		step := 1.0
		for _, s := range []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600} {
			step = s
			if end/s <= 15 {
				break
			}
		}
		var ts []plot.Tick
		for v := math.Ceil(lo/step) * step; v <= math.Min(hi, end)+1e-9; v += step {
			ts = append(ts, plot.Tick{Value: v, Label: fmt.Sprintf("%gs", v)})
			for k := 1; k < 5 && step >= 5; k++ {
				if m := v + float64(k)*step/5; m <= math.Min(hi, end) {
					ts = append(ts, plot.Tick{Value: m})
				}
			}
		}
		return ts
	})
}

// perBucket counts ok requests per 100 ms (by scheduled start) for every
// bucket, and failed ones for the buckets that have any.
func perBucket(recs []Record, dur time.Duration) (ok plotter.XYs, failed plotter.XYs) {
	n := int(dur/bucket) + 1
	okN := make([]int, n)
	failN := make([]int, n)
	for _, r := range recs {
		i := int(r.Start / bucket)
		if i < 0 || i >= n {
			continue
		}
		if r.Outcome.Failed() {
			failN[i]++
		} else {
			okN[i]++
		}
	}
	for i := range n {
		x := (time.Duration(i) * bucket).Seconds()
		ok = append(ok, plotter.XY{X: x, Y: float64(okN[i])})
		if failN[i] > 0 {
			failed = append(failed, plotter.XY{X: x + bucket.Seconds()/2, Y: float64(failN[i])})
		}
	}
	return ok, failed
}

// lanePlot draws one lane per replica: a thin grey line for its whole life,
// green while it was ready and not yet signalled, orange from SIGTERM to
// exit, and a marker per drain step.
func lanePlot(run StrategyRun, end, xmax float64) (*plot.Plot, error) {
	p := plot.New()
	sans(p)
	p.Title.Text = "replicas: serving (green), draining (orange), drain steps"
	p.X.Label.Text = "seconds since the drill's start (the same axis for every strategy)"
	p.X.Min, p.X.Max = 0, xmax
	p.X.Tick.Marker = secondTicks(end)
	reps := append([]ReplicaReport(nil), run.Replicas...)
	sort.Slice(reps, func(i, j int) bool { return reps[i].ID < reps[j].ID })
	p.Y.Min, p.Y.Max = -float64(len(reps))-0.5, -0.5
	p.Y.Tick.Marker = laneTicks(reps)
	p.Add(plotter.NewGrid())

	seg := func(y float64, from, to time.Duration, col color.Color, width vg.Length) error {
		if from < 0 {
			return nil
		}
		if to < 0 {
			to = run.Duration
		}
		l, err := plotter.NewLine(plotter.XYs{{X: from.Seconds(), Y: y}, {X: to.Seconds(), Y: y}})
		if err != nil {
			return err
		}
		l.LineStyle.Color = col
		l.LineStyle.Width = width
		p.Add(l)
		return nil
	}
	marks := make([]plotter.XYs, len(drainMarks))
	for i, rp := range reps {
		y := -float64(i + 1)
		if err := seg(y, rp.Started, rp.Exited, colLife, vg.Points(1)); err != nil {
			return nil, err
		}
		servingEnd := rp.StopStart()
		if servingEnd < 0 {
			servingEnd = rp.Exited
		}
		if err := seg(y, rp.Ready, servingEnd, colServing, vg.Points(5)); err != nil {
			return nil, err
		}
		if stop := rp.StopStart(); stop >= 0 {
			if err := seg(y, stop, rp.Exited, colDrain, vg.Points(5)); err != nil {
				return nil, err
			}
		}
		for k, m := range drainMarks {
			if at, ok := m.at(rp); ok {
				marks[k] = append(marks[k], plotter.XY{X: at.Seconds(), Y: y})
			}
		}
	}
	for k, m := range drainMarks {
		if len(marks[k]) == 0 {
			continue
		}
		s, err := plotter.NewScatter(marks[k])
		if err != nil {
			return nil, err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: m.color, Radius: vg.Points(4), Shape: m.shape}
		p.Add(s)
		p.Legend.Add(m.label, s)
	}
	p.Legend.Top = true
	p.Legend.XOffs = vg.Points(-4)
	return p, nil
}

// laneTicks labels lane -i with the replica's name and role.
func laneTicks(reps []ReplicaReport) plot.Ticker {
	return plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		var ts []plot.Tick
		for i, rp := range reps {
			y := -float64(i + 1)
			if y < lo-1e-9 || y > hi+1e-9 {
				continue
			}
			label := fmt.Sprintf("r%d", rp.ID)
			if rp.Role == RoleReplacement {
				label += " (new)"
			}
			ts = append(ts, plot.Tick{Value: y, Label: label})
		}
		if len(ts) == 0 {
			ts = append(ts, plot.Tick{Value: math.Round((lo + hi) / 2)})
		}
		return ts
	})
}
