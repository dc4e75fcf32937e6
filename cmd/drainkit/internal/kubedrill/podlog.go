package kubedrill

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/kubedrill/kubeload"
	"github.com/drainkit/drainkit/cmd/drainkit/internal/serve"
)

// The service's log lines the drill reads, by what they mark.
const (
	// logSIGTERM is the process receiving SIGTERM.
	logSIGTERM = iota + 1
	// logDone is the strategy's last line: the drain is over and the
	// process exits.
	logDone
)

// logMarks are the messages of the lines the drill reads: the SIGTERM
// line both strategies log (serve.SignalLogged) and each strategy's last.
var logMarks = map[string]int{
	serve.SignalLogged:         logSIGTERM,
	"drainkit: drain complete": logDone,
	"shutdown strategy: done":  logDone,
}

// podLogLine parses one line of `kubectl logs --prefix`: "[pod/NAME/
// CONTAINER] TEXT". It returns the pod's name, what the line marks
// (logSIGTERM, logDone) and its instant (the slog record's time, the
// process's clock), ok false for any other line.
func podLogLine(line string) (pod string, mark int, at time.Time, ok bool) {
	prefix, text, found := strings.Cut(line, "] ")
	if !found || !strings.HasPrefix(prefix, "[pod/") {
		return "", 0, time.Time{}, false
	}
	pod, _, _ = strings.Cut(strings.TrimPrefix(prefix, "[pod/"), "/")
	var rec struct {
		Time time.Time `json:"time"`
		Msg  string    `json:"msg"`
	}
	if json.Unmarshal([]byte(text), &rec) != nil || logMarks[rec.Msg] == 0 {
		return "", 0, time.Time{}, false
	}
	return pod, logMarks[rec.Msg], rec.Time, true
}

// loadLogLine parses one line of a load pod's log (a kubeload.Line), ok false
// for any other line.
func loadLogLine(line string) (kubeload.Line, bool) {
	var l kubeload.Line
	if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &l) != nil || l.Kind == "" {
		return kubeload.Line{}, false
	}
	return l, true
}
