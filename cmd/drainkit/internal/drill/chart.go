package drill

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"math"
	"sort"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
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

// signalled marks when the drill sent sig to the replica: a kill -9 is
// labelled SIGKILL, never SIGTERM (ReplicaReport.StopSignal; "" counts as
// SIGTERM).
func signalled(sig string) func(ReplicaReport) (time.Duration, bool) {
	return func(rp ReplicaReport) (time.Duration, bool) {
		return rp.Signalled, rp.Signalled >= 0 && cmp.Or(rp.StopSignal, "SIGTERM") == sig
	}
}

var drainMarks = []drainMark{
	{"preStop call", draw.RingGlyph{}, colBlack, func(rp ReplicaReport) (time.Duration, bool) { return rp.PreStop, rp.PreStop >= 0 }},
	{"SIGTERM", draw.TriangleGlyph{}, colBlack, signalled("SIGTERM")},
	{"SIGKILL", draw.TriangleGlyph{}, colFail, signalled("SIGKILL")},
	{"not ready", draw.CircleGlyph{}, colDrain, step(lifecycle.StepNotReady)},
	{"deregistered", draw.SquareGlyph{}, color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, step(lifecycle.StepDeregistered)},
	{"last late arrival", draw.PlusGlyph{}, colFail, func(rp ReplicaReport) (time.Duration, bool) {
		if rp.Timeline == nil || rp.Timeline.LateArrivals == 0 {
			return 0, false
		}
		return rp.T0 + rp.Timeline.LastLateArrival, true
	}},
	{"listeners closed", draw.PyramidGlyph{}, color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}, step(lifecycle.StepListenersClosed)},
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

// ChartSVG draws one strategy's timeline: requests and failures per second
// (top) and each replica's life and drain steps (bottom), on a time axis in
// seconds from the drill's start that runs to until (at least the run's own
// duration). Give every strategy of a drill the same until (the longest
// run's Duration) and their charts share one scale.
func ChartSVG(run StrategyRun, until time.Duration) ([]byte, error) {
	until = max(until, run.Duration)
	end := until.Seconds()
	// Room on the right for the legends, so that they cover no data.
	xmax := end * 1.2
	ok, failed := perSecond(run.Records, run.Duration)

	top := plot.New()
	sans(top)
	top.Title.Text = run.Scenario + " / " + run.Name + ": requests per second (sliding 500 ms)"
	top.Y.Label.Text = "requests / s"
	top.X.Min, top.X.Max = 0, xmax
	top.X.Tick.Marker = secondTicks(end)
	top.Y.Min = 0
	top.Add(plotter.NewGrid())
	for _, l := range []struct {
		name  string
		xys   plotter.XYs
		color color.Color
		width vg.Length
	}{{"ok", ok, colOK, 1}, {"failed", failed, colFail, 2}} {
		line, err := rateLine(l.xys, l.color, l.width)
		if err != nil {
			return nil, err
		}
		top.Add(line)
		top.Legend.Add(l.name, line)
	}
	top.Legend.Top = true
	top.Legend.XOffs = vg.Points(-4)

	lanes, err := lanePlot(run, end, xmax)
	if err != nil {
		return nil, err
	}
	return drawTiles(11*vg.Inch, 7*vg.Inch, top, lanes)
}

// label names a run in a legend: the strategy, prefixed with its scenario
// unless that is the rolling restart.
func (r StrategyRun) label() string {
	if r.Scenario == "" || r.Scenario == ScenarioRolling {
		return r.Name
	}
	return r.Scenario + "/" + r.Name
}

// ComparisonSVG draws every run's failures per second on one time axis,
// one line per strategy, to put at the top of the report: where the
// strategies lost requests, side by side.
func ComparisonSVG(runs []StrategyRun, until time.Duration) ([]byte, error) {
	end := until.Seconds()
	p := plot.New()
	sans(p)
	p.Title.Text = "failed requests per second, every strategy (sliding 500 ms)"
	p.Y.Label.Text = "failed / s"
	p.X.Label.Text = "seconds since the drill's start"
	p.X.Min, p.X.Max = 0, end*1.15
	p.X.Tick.Marker = secondTicks(end)
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	for i, run := range runs {
		_, failed := perSecond(run.Records, run.Duration)
		line, err := rateLine(failed, strategyColor(i), 2)
		if err != nil {
			return nil, err
		}
		line.LineStyle.Dashes = strategyDashes(i)
		p.Add(line)
		p.Legend.Add(run.label(), line)
	}
	p.Legend.Top = true
	p.Legend.XOffs = vg.Points(-4)
	return drawTiles(11*vg.Inch, 3.2*vg.Inch, p)
}

// strategyColor and strategyDashes tell the strategies apart in the
// comparison chart, also in grey print.
func strategyColor(i int) color.Color {
	cols := []color.Color{colOK, colFail, colDrain, colServing, color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, colBlack}
	return cols[i%len(cols)]
}

func strategyDashes(i int) []vg.Length {
	d := [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)}}
	return d[i%len(d)]
}

// rateLine is a line of xys in col, width points wide.
func rateLine(xys plotter.XYs, col color.Color, width vg.Length) (*plotter.Line, error) {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, err
	}
	l.LineStyle.Color = col
	l.LineStyle.Width = vg.Points(float64(width))
	return l, nil
}

// drawTiles draws plots stacked, aligned on their axes, into an SVG w by h.
func drawTiles(w, h vg.Length, plots ...*plot.Plot) ([]byte, error) {
	c := vgsvg.New(w, h)
	dc := draw.New(c)
	grid := make([][]*plot.Plot, len(plots))
	for i, p := range plots {
		grid[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(4), PadY: vg.Points(8)}
	canvases := plot.Align(grid, tiles, dc)
	for i, p := range plots {
		p.Draw(canvases[i][0])
	}
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

// rateWindow is the width of the sliding window the charts' rates are
// averaged over; they are sampled every bucket.
const rateWindow = 500 * time.Millisecond

// perSecond returns the rates of ok and of failed requests (by scheduled
// start), in requests per second over a sliding rateWindow, sampled every
// 100 ms: a rate, not a comb of single failures.
func perSecond(recs []Record, dur time.Duration) (ok, failed plotter.XYs) {
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
	w := int(rateWindow / bucket)
	per := 1 / rateWindow.Seconds()
	var okSum, failSum int
	for i := range n {
		okSum += okN[i]
		failSum += failN[i]
		if i >= w {
			okSum -= okN[i-w]
			failSum -= failN[i-w]
		}
		x := (time.Duration(i+1) * bucket).Seconds()
		ok = append(ok, plotter.XY{X: x, Y: float64(okSum) * per})
		failed = append(failed, plotter.XY{X: x, Y: float64(failSum) * per})
	}
	return ok, failed
}

// lanePlot draws one lane per replica: a thin grey line for its whole life,
// green while it was ready and not yet stopped, orange from the stop to
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
	marks := make([]plotter.XYs, len(drainMarks))
	for i, rp := range reps {
		y := -float64(i + 1)
		if err := addLane(p, rp, y, run.Duration); err != nil {
			return nil, err
		}
		for k, m := range drainMarks {
			if at, ok := m.at(rp); ok {
				marks[k] = append(marks[k], plotter.XY{X: at.Seconds(), Y: y + markOffset(k)})
			}
		}
	}
	if err := addMarks(p, marks); err != nil {
		return nil, err
	}
	if err := addEventLines(p, run.Events, reps); err != nil {
		return nil, err
	}
	p.Legend.Top = true
	p.Legend.XOffs = vg.Points(-4)
	return p, nil
}

// addLane draws one replica's life at height y: grey from start to exit,
// green while serving, orange while draining (open ends run to until).
func addLane(p *plot.Plot, rp ReplicaReport, y float64, until time.Duration) error {
	servingEnd := rp.StopStart()
	if servingEnd < 0 {
		servingEnd = rp.Exited
	}
	segs := []struct {
		from, to time.Duration
		col      color.Color
		width    vg.Length
	}{
		{rp.Started, rp.Exited, colLife, vg.Points(1)},
		{rp.Ready, servingEnd, colServing, vg.Points(5)},
		{rp.StopStart(), rp.Exited, colDrain, vg.Points(5)},
	}
	for _, sg := range segs {
		if sg.from < 0 {
			continue
		}
		to := sg.to
		if to < 0 {
			to = until
		}
		l, err := plotter.NewLine(plotter.XYs{{X: sg.from.Seconds(), Y: y}, {X: to.Seconds(), Y: y}})
		if err != nil {
			return err
		}
		l.LineStyle.Color = sg.col
		l.LineStyle.Width = sg.width
		p.Add(l)
	}
	return nil
}

// addMarks adds the drain-step markers, one scatter and legend entry per
// kind that occurred.
func addMarks(p *plot.Plot, marks []plotter.XYs) error {
	for k, m := range drainMarks {
		if len(marks[k]) == 0 {
			continue
		}
		s, err := plotter.NewScatter(marks[k])
		if err != nil {
			return err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: m.color, Radius: vg.Points(3), Shape: m.shape}
		p.Add(s)
		p.Legend.Add(m.label, s)
	}
	return nil
}

// eventInstant is one of an event's four instants, drawn as a short
// vertical line across the faulted replica's lane.
type eventInstant struct {
	label  string
	color  color.Color
	dashes []vg.Length
	at     func(Event) time.Duration
}

var eventInstants = []eventInstant{
	{"fault", colBlack, nil, func(e Event) time.Duration { return e.Fault }},
	{"registry decision", color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, []vg.Length{vg.Points(4), vg.Points(2)}, func(e Event) time.Duration { return e.Decision }},
	{"first consumer view without", color.RGBA{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff}, []vg.Length{vg.Points(2), vg.Points(2)}, func(e Event) time.Duration { return e.ConsumerView }},
	{"last request to old address (start: first to new)", colFail, []vg.Length{vg.Points(6), vg.Points(2), vg.Points(1), vg.Points(2)}, func(e Event) time.Duration {
		if e.Added {
			return e.FirstSent
		}
		return e.LastSent
	}},
}

// addEventLines marks each event's instants on its replica's lane, one
// legend entry per instant that occurred.
func addEventLines(p *plot.Plot, events []Event, reps []ReplicaReport) error {
	lane := map[int]float64{}
	for i, rp := range reps {
		lane[rp.ID] = -float64(i + 1)
	}
	for _, in := range eventInstants {
		var first *plotter.Line
		for _, e := range events {
			y, ok := lane[e.Replica]
			at := in.at(e)
			if !ok || at < 0 {
				continue
			}
			l, err := plotter.NewLine(plotter.XYs{{X: at.Seconds(), Y: y - 0.45}, {X: at.Seconds(), Y: y + 0.45}})
			if err != nil {
				return err
			}
			l.LineStyle.Color, l.LineStyle.Width, l.LineStyle.Dashes = in.color, vg.Points(1.5), in.dashes
			p.Add(l)
			if first == nil {
				first = l
			}
		}
		if first != nil {
			p.Legend.Add(in.label, first)
		}
	}
	return nil
}

// markOffset spreads the drain-step markers of one lane over its height,
// one row per kind in drainMarks order, so that steps a few milliseconds
// apart (SIGTERM, not ready, deregistered) sit one above the other instead of
// piling into one blob.
func markOffset(k int) float64 {
	return 0.36 * (float64(k)/float64(len(drainMarks)-1) - 0.5)
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
