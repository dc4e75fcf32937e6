package drill

import "html/template"

// The HTML report's part for the figures of the brownout and long-lived
// scenarios, under each run's events ("scenarioFigures", given the run's
// section).
func init() {
	template.Must(htmlTmpl.Parse(`{{define "scenarioFigures"}}
{{with .Brownout}}<table class="brownout">
<tr><th>capacity per replica</th><th>per-try timeout</th><th>attempts</th><th>retries</th><th>Amplification (attempts / requests)</th><th>retry budget</th><th>retries refused by the budget</th><th>shed over capacity: healthy replicas</th><th>shed over capacity: browned-out replica</th></tr>
<tr><td>{{if .Capacity}}{{.Capacity}}{{else}}the binary's own{{end}}</td><td>{{if .TryTimeoutSeconds}}{{.TryTimeoutSeconds}}s{{else}}none{{end}}</td><td>{{.Attempts}}</td><td>{{.Retries}}</td><td>{{printf "%.3f" .Amplification}}</td><td>{{if .RetryBudget}}{{deref .RetryBudget}} ({{if .BudgetHeld}}held{{else}}exceeded{{end}}){{else}}none{{end}}</td><td>{{.BudgetDenied}}</td><td{{if gt .ShedByOthers 0}} class="fail"{{end}}>{{.ShedByOthers}}</td><td>{{.ShedByVictim}}</td></tr>
</table>{{end}}
{{if .Streams}}<table class="streams">
<tr><th class="l">stream kind</th><th>streams</th><th>opened</th><th>ended by the drain signal</th><th>re-opened on another replica</th><th>errors</th><th class="l">example error</th></tr>
{{range .Streams}}<tr><td class="l">{{.Kind}}</td><td>{{.Streams}}</td><td>{{.Opened}}</td><td>{{.DrainEnded}}</td><td>{{.ReopenedElsewhere}}</td><td{{if gt .Errors 0}} class="fail"{{end}}>{{.Errors}}</td><td class="l">{{.ErrorExample}}</td></tr>
{{end}}</table>{{end}}
{{end}}`))
}
