package kubedrill

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/kubedrill/kubeload"
)

// Failures go to the pod that answered them (a 5xx names it), else by time
// to the last old pod deleted before they were sent whose span holds them;
// the others are unattributed, and those sent before the restart are
// counted apart.
func TestBuild(t *testing.T) {
	restart := time.Unix(2000, 0)
	at := func(ms int) time.Time { return restart.Add(time.Duration(ms) * time.Millisecond) }
	old := []podTrack{
		{name: "b", ip: "10.0.0.2", deleted: at(3000), exited: at(4000), rulesGone: at(3500)},
		{name: "a", ip: "10.0.0.1", deleted: at(1000), exited: at(6000)},
	}
	ms := func(t time.Time) int64 { return t.UnixMilli() }
	sum := &kubeload.Summary{Sent: 100, OK: 94, Failed: 6, ByPod: map[string]*kubeload.PodCount{"10.0.0.1": {N: 50, LastMS: ms(at(1500))}}, Failures: []kubeload.Failure{
		{SentMS: ms(at(-100)), Error: "dial tcp: connection refused"},                        // before the restart
		{SentMS: ms(at(1200)), Error: "dial tcp 10.200.2.4:80: connect: connection refused"}, // a (only a deleting)
		{SentMS: ms(at(3200)), Error: "read: connection reset by peer"},                      // b (the later deletion)
		{SentMS: ms(at(3300)), Error: "HTTP 503", ServedBy: "10.0.0.1"},                      // a, said so
		{SentMS: ms(at(4900)), Error: "EOF"},                                                 // b: its span is its exit (4.0 s) + 1 s of slack
		{SentMS: ms(at(9000)), Error: "EOF"},                                                 // none
	}}
	r := build("drainkit", LoadService, restart, old, sum)
	if r.FailedBeforeRestart != 1 || r.Unattributed != 1 {
		t.Errorf("before the restart %d, unattributed %d: want 1 and 1", r.FailedBeforeRestart, r.Unattributed)
	}
	if r.Pods[0].Pod != "a" || r.Pods[0].Failed != 2 || r.Pods[1].Failed != 2 {
		t.Errorf("pods %s %d, %s %d failures: want a 2, b 2", r.Pods[0].Pod, r.Pods[0].Failed, r.Pods[1].Pod, r.Pods[1].Failed)
	}
	if r.Pods[0].Served != 50 || *r.Pods[0].LastRequestMS != 1500 || r.Pods[0].DrainMS != 5000 {
		t.Errorf("pod a: served %d, last request %d ms, drain %d ms: want 50, 1500, 5000", r.Pods[0].Served, *r.Pods[0].LastRequestMS, r.Pods[0].DrainMS)
	}
	if want := []int{0, 1, 0, 2, 1, 0, 0, 0, 0, 1}; !slices.Equal(r.FailedPerSecond, want) {
		t.Errorf("failed per second %v, want %v", r.FailedPerSecond, want)
	}
	if r.Errors["connection refused"] != 2 || r.Errors["EOF"] != 2 {
		t.Errorf("errors %v", r.Errors)
	}
	if r.DrainMinMS != 1000 || r.DrainMaxMS != 5000 {
		t.Errorf("drain min %d max %d, want 1000 5000", r.DrainMinMS, r.DrainMaxMS)
	}
}

// The verdict passes only a valid run in which drainkit lost nothing, and
// sets drainkit's drain time beside preStop sleep's.
func TestVerdict(t *testing.T) {
	res := &Result{PreStopSleepS: 5, Strategies: []StrategyResult{
		{Strategy: StrategyDrainkit, Load: LoadService, Sent: 100, DrainMaxMS: 2500},
		{Strategy: StrategyDrainkit, Load: LoadEndpointSlices, Sent: 100, DrainMaxMS: 2500},
		{Strategy: StrategyShutdown, Load: LoadService, Sent: 100, Failed: 7},
		{Strategy: StrategySleep, Load: LoadService, Sent: 100, DrainMaxMS: 5900},
	}}
	if !Passed(res) {
		t.Fatal("a valid run where drainkit lost nothing did not pass")
	}
	// --wide: the verdict on one line, to be searched.
	out := render(t, res, true)
	for _, want := range []string{"PASS:", "shutdown via service lost 7 of 100", "drainkit via endpointslices lost 0 of 100", "drained each pod in at most 2.50 s, 3.40 s sooner than sleep 5s"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	res.Strategies[0].Failed = 1
	if Passed(res) || !strings.HasPrefix(Verdict(res), "FAIL:") {
		t.Errorf("drainkit lost a request and the verdict is %q", Verdict(res))
	}
	res.Strategies[0].Failed = 0
	// Through the consumer too: a loss there fails the run, and drainkit
	// is then no longer at equal zero loss with sleep.
	res.Strategies[1].Failed = 2
	if v := Verdict(res); Passed(res) || !strings.HasPrefix(v, "FAIL:") || strings.Contains(v, "equal zero loss") {
		t.Errorf("drainkit lost 2 requests through the consumer and the verdict is %q", v)
	}
	res.Strategies[1].Failed = 0
	res.Invalid = invalidReason(&Result{Strategies: []StrategyResult{{Strategy: StrategySleep, MaxLagMS: 1500}}})
	if Passed(res) || !strings.Contains(Verdict(res), "1500 ms behind") {
		t.Errorf("a run whose load lagged 1.5 s: verdict %q", Verdict(res))
	}
}
