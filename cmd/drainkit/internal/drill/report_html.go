package drill

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
)

// WriteHTML writes a self-contained HTML page: the result, a comparison
// chart of every strategy's failures per second on one time axis (the
// first screen), the configuration, the summary table, and per strategy its
// verdict, a timeline chart (gonum/plot SVG, inlined) and a table of its
// replicas' drain steps. It loads nothing from anywhere: no scripts, no
// external fonts or styles; its Content-Security-Policy forbids any fetch.
func WriteHTML(w io.Writer, res *Result, sums []Summary) error {
	var table bytes.Buffer
	if err := WriteTable(&table, res, sums); err != nil {
		return err
	}
	v := Judge(res, sums)
	page := htmlPage{
		Generated: time.Now().Format(time.RFC1123),
		Config:    res.Config.Report(),
		Setup:     setupRows(res.Config),
		Passed:    Passed(res, sums),
		Valid:     v.Valid,
		Invalid:   v.Reason,
		Wall:      fmt.Sprintf("%.1fs", res.Wall.Seconds()),
		Text:      table.String(),
	}
	tm := res.Config.timings()
	for _, k := range sortedTimingKeys(tm) {
		src := page.Config.TimingSources[k]
		if src == "" {
			src = "default"
		}
		page.Timings = append(page.Timings, [3]string{k, tm[k].String(), src})
	}
	// One time axis for all charts: from the drill's start to the end of
	// the longest run.
	var until time.Duration
	for _, run := range res.Runs {
		until = max(until, run.Duration)
	}
	cmp, err := ComparisonSVG(res.Runs, until)
	if err != nil {
		return fmt.Errorf("comparison chart: %w", err)
	}
	page.Comparison = template.HTML(stripXMLDecl(cmp))
	for i, run := range res.Runs {
		sec, err := strategySection(run, sums[i], until)
		if err != nil {
			return err
		}
		page.Strategies = append(page.Strategies, sec)
	}
	return htmlTmpl.Execute(w, page)
}

// strategySection is one strategy's part of the page.
func strategySection(run StrategyRun, sum Summary, until time.Duration) (htmlStrategy, error) {
	svg, err := ChartSVG(run, until)
	if err != nil {
		return htmlStrategy{}, fmt.Errorf("chart for %s: %w", run.Name, err)
	}
	sec := htmlStrategy{Summary: sum, Discovery: run.Discovery, SVG: template.HTML(stripXMLDecl(svg))}
	for _, rp := range run.Replicas {
		sec.Rows = append(sec.Rows, replicaRow(rp, sum))
	}
	sort.Slice(sec.Rows, func(a, b int) bool { return sec.Rows[a].ID < sec.Rows[b].ID })
	sec.Kinds = kindList(sum.FailuresByKind)
	for _, g := range groupDeaths(sum.Deaths) {
		sec.DeathGroups = append(sec.DeathGroups, htmlDeath{Line: g.String(), Stderr: g.first.Stderr})
	}
	return sec, nil
}

// setupRows describes the drill's configuration for the page.
func setupRows(c Config) [][2]string {
	disc := fmt.Sprintf("GET /readyz every %s, dropped after %d failures", c.DiscoveryInterval, c.FailureThreshold)
	if c.Consul != "" {
		disc = "consul watch on " + c.Consul
	}
	if c.Etcd != "" {
		disc = "etcd watch on " + c.Etcd
	}
	if c.Nacos != "" {
		disc = "nacos on " + c.Nacos + ": " + c.nacosDiscovery()
	}
	restart := "SIGTERM (kill: SIGKILL) to the old replica once its replacement is listed"
	if c.PreStop {
		restart = "preStop POST /drain?wait=propagation on the old replica, then SIGTERM"
	}
	if slices.Contains(c.Strategies, StrategyOfflineKill) && c.Exec == "" {
		restart += "; offline-kill: " + c.offlineKillRestart()
	}
	span := fmt.Sprintf("%s before the rolling restart; after it at least %s, then until no consumer lists a replaced replica (at most %s more) and every strategy is done: the same span for all strategies",
		c.Baseline, c.Tail, c.StaleWait())
	if c.Sequential {
		span = fmt.Sprintf("%s before the rolling restart; after it at least %s, then until no consumer lists a replaced replica (at most %s more); strategies one after another (--sequential)",
			c.Baseline, c.Tail, c.StaleWait())
	}
	rows := [][2]string{
		{"replicas per strategy", fmt.Sprint(c.Replicas)},
		{"load", fmt.Sprintf("%g requests/s from %d %s consumers, %s, timeout %s", c.Rate, c.Consumers, c.ConsumerKind, c.target(), c.RequestTimeout)},
		{"discovery", disc},
		{"consumer cache", c.ConsumerCache.String()},
		{"load span", span},
		{"restart", restart},
	}
	if c.Exec != "" {
		rows = append(rows, [2]string{"binary", c.Exec})
	}
	return rows
}

type htmlPage struct {
	Generated  string
	Config     ConfigReport
	Setup      [][2]string
	Timings    [][3]string
	Passed     bool
	Valid      bool
	Invalid    string
	Wall       string
	Text       string
	Comparison template.HTML
	Strategies []htmlStrategy
}

type htmlStrategy struct {
	Summary
	DeathGroups []htmlDeath
	Discovery   string
	Kinds       string
	SVG         template.HTML
	Rows        []htmlReplica
}

// htmlDeath is a group of replicas that ended without being stopped, with
// their last stderr lines.
type htmlDeath struct {
	Line   string
	Stderr []string
}

type htmlReplica struct {
	ID                                                                   int
	Role                                                                 string
	Started, Ready, PreStop, Signal, NotReady, Dereg, Late, Closed, Exit string
	Requests, Failed                                                     int
	LateN                                                                string
	ExitCode                                                             string
}

// signalAt renders when the drill signalled the replica and with which
// signal ("1.25 SIGKILL"), "–" when it never did.
func signalAt(rp ReplicaReport, at func(time.Duration) string) string {
	if rp.Signalled < 0 {
		return at(rp.Signalled)
	}
	return at(rp.Signalled) + " " + cmp.Or(rp.StopSignal, "SIGTERM")
}

func replicaRow(rp ReplicaReport, s Summary) htmlReplica {
	at := func(d time.Duration) string {
		if d < 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f", d.Seconds())
	}
	stepAt := func(name string) string {
		if rp.Timeline == nil {
			return "–"
		}
		off, ok := rp.Timeline.Steps[name]
		if !ok {
			return "–"
		}
		return at(rp.T0 + off)
	}
	row := htmlReplica{
		ID: rp.ID, Role: rp.Role,
		Started: at(rp.Started), Ready: at(rp.Ready), PreStop: at(rp.PreStop), Signal: signalAt(rp, at), Exit: at(rp.Exited),
		NotReady: stepAt(lifecycle.StepNotReady), Dereg: stepAt(lifecycle.StepDeregistered), Closed: stepAt(lifecycle.StepListenersClosed),
		Late: "–", LateN: "–", ExitCode: fmt.Sprint(rp.ExitCode),
	}
	if rp.ExitCode < 0 {
		row.ExitCode = strings.TrimPrefix(rp.ExitStatus, "signal: ")
	}
	if rp.Killed {
		row.ExitCode += " (killed)"
	}
	if tl := rp.Timeline; tl != nil {
		row.LateN = fmt.Sprint(tl.LateArrivals)
		if tl.LateArrivals > 0 {
			row.Late = at(rp.T0 + tl.LastLateArrival)
		}
	}
	for _, r := range s.Replicas {
		if r.ID == rp.ID {
			row.Requests, row.Failed = r.Requests, r.Failed
		}
	}
	return row
}

// stripXMLDecl removes the XML declaration, which has no place inside HTML.
func stripXMLDecl(svg []byte) []byte {
	if i := bytes.Index(svg, []byte("<svg")); i >= 0 {
		return svg[i:]
	}
	return svg
}

var htmlTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"instant":   instant,
	"perSecond": perSecondList,
	"deref":     func(n *int) int { return *n },
	"rev": func(r *uint64) string {
		if r == nil {
			return "-"
		}
		return fmt.Sprint(*r)
	},
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>drainkit drill report</title>
<style>
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; margin: 1.5em auto; max-width: 1100px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: .5em 0 1em; font-size: .9em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
.pass { color: #1a7f1a; font-weight: bold; } .fail { color: #c62828; font-weight: bold; }
.verdict { padding: .5em .8em; border-left: 4px solid #999; background: #fafafa; }
.verdict.pass { border-color: #1a7f1a; } .verdict.fail { border-color: #c62828; }
svg { width: 100%; height: auto; display: block; }
.comparison svg { max-height: 55vh; }
svg text { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; }
pre { background: #f7f7f7; padding: .8em; overflow-x: auto; font-size: .8em; }
</style>
</head>
<body>
<h1>drainkit drill report</h1>
<p>Result: {{if not .Valid}}<span class="fail">INVALID</span>{{else if .Passed}}<span class="pass">PASS</span>{{else}}<span class="fail">FAIL</span>{{end}}
 &middot; wall time {{.Wall}} &middot; generated {{.Generated}}</p>
{{if not .Valid}}<p class="verdict fail">{{.Invalid}}</p>{{end}}
<div class="comparison">{{.Comparison}}</div>

<h2>Configuration</h2>
<table>
{{range .Setup}}<tr><th class="l">{{index . 0}}</th><td class="l">{{index . 1}}</td></tr>
{{end}}</table>
<table>
<tr><th class="l">timing (DRAINKIT_*)</th><th>value</th><th class="l">from</th></tr>
{{range .Timings}}<tr><td class="l">{{index . 0}}</td><td>{{index . 1}}</td><td class="l">{{index . 2}}</td></tr>
{{end}}</table>

<h2>Summary</h2>
<table>
<tr><th class="l">scenario</th><th class="l">strategy</th><th class="l">consumer</th><th>requests</th><th>failed</th><th>written, unanswered</th><th>resent requests</th><th>ejections</th><th class="l">failure kinds</th><th>drain median</th><th>drain max</th><th>late arrivals</th><th>staleness</th></tr>
{{range .Strategies}}<tr><td class="l">{{.Scenario}}</td><td class="l">{{.Name}}</td><td class="l">{{.Consumer}}</td><td>{{.Requests}}</td><td{{if gt .Failed 0}} class="fail"{{end}}>{{.Failed}}</td><td>{{.WrittenUnanswered}}</td><td>{{.Resent}}</td><td>{{.Ejections}}</td><td class="l">{{.Kinds}}</td>
<td>{{if .DrainSeconds}}{{printf "%.2f" .DrainMedianSeconds}}s{{else}}–{{end}}</td><td>{{if .DrainSeconds}}{{printf "%.2f" .DrainMaxSeconds}}s{{else}}–{{end}}</td><td>{{if gt .LateReportedBy 0}}{{.LateRequests}}{{else}}–{{end}}</td><td>{{printf "%.2f" .StalenessSeconds}}s</td></tr>
{{end}}</table>

{{range .Strategies}}
<h2>Scenario {{.Scenario}} &middot; strategy {{.Name}}</h2>
<p class="verdict {{if .Pass}}pass{{else}}fail{{end}}">{{.Verdict}}</p>
{{if .Error}}<p class="fail">error: {{.Error}}</p>{{end}}
<p>Discovery: {{.Discovery}}.</p>
{{.SVG}}
{{if .Events}}<table class="events">
<tr><th>replica</th><th class="l">fault</th><th>at</th><th>registry decision</th><th>revision</th><th>first consumer view without (start: with)</th><th>revision</th><th>last request to old address (start: first to the new one)</th><th>first ejection</th><th class="l">failures per second from the fault</th></tr>
{{range .Events}}<tr><td>r{{.Replica}}</td><td class="l">{{.Kind}}</td><td>{{printf "%.2f" .FaultSeconds}}</td><td>{{instant .RegistryDecisionSeconds}}</td><td>{{rev .RegistryRevision}}</td><td>{{instant .ConsumerViewSeconds}}</td><td>{{rev .ConsumerRevision}}</td><td>{{.AddressRequests}}</td><td>{{instant .EjectionSeconds}}</td><td class="l">{{perSecond .FailuresPerSecond}}</td></tr>
{{end}}</table>
{{if .Budget}}<p>Failure budget: {{deref .Budget}} ({{.BudgetReason}}).</p>{{end}}{{end}}
{{template "scenarioFigures" .}}
<table>
<tr><th>replica</th><th class="l">role</th><th>started</th><th>ready</th><th>preStop</th><th>signal</th><th>not ready</th><th>deregistered</th><th>last late arrival</th><th>listeners closed</th><th>exit</th><th>exit code</th><th>requests</th><th>failed</th><th>late arrivals</th></tr>
{{range .Rows}}<tr><td>r{{.ID}}</td><td class="l">{{.Role}}</td><td>{{.Started}}</td><td>{{.Ready}}</td><td>{{.PreStop}}</td><td>{{.Signal}}</td><td>{{.NotReady}}</td><td>{{.Dereg}}</td><td>{{.Late}}</td><td>{{.Closed}}</td><td>{{.Exit}}</td><td>{{.ExitCode}}</td><td>{{.Requests}}</td><td>{{.Failed}}</td><td>{{.LateN}}</td></tr>
{{end}}</table>
<p>Times in seconds from the drill's start; every strategy sent load from {{printf "%.2f" .LoadStartSeconds}}s to {{printf "%.2f" .LoadEndSeconds}}s.</p>
{{range .DeathGroups}}<p class="fail">{{.Line}}</p>{{if .Stderr}}<pre>{{range .Stderr}}{{.}}
{{end}}</pre>{{end}}
{{end}}
{{if .FailureExamples}}<table><tr><th class="l">failure kind</th><th class="l">example error</th></tr>
{{range $k, $v := .FailureExamples}}<tr><td class="l">{{$k}}</td><td class="l">{{$v}}</td></tr>
{{end}}</table>{{end}}
{{end}}

<h2>Text output</h2>
<pre>{{.Text}}</pre>
</body>
</html>
`))
