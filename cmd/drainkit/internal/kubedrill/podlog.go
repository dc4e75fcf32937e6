package kubedrill

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/serve"
)

// podLogLine parses one line of `kubectl logs --prefix`: "[pod/NAME/
// CONTAINER] TEXT". It returns the pod's name and the instant of the
// service's SIGTERM line (serve.SignalLogged, whose slog time is when the
// process got the signal), ok false for any other line.
func podLogLine(line string) (pod string, at time.Time, ok bool) {
	prefix, text, found := strings.Cut(line, "] ")
	if !found || !strings.HasPrefix(prefix, "[pod/") {
		return "", time.Time{}, false
	}
	pod, _, _ = strings.Cut(strings.TrimPrefix(prefix, "[pod/"), "/")
	var rec struct {
		Time time.Time `json:"time"`
		Msg  string    `json:"msg"`
	}
	if json.Unmarshal([]byte(text), &rec) != nil || rec.Msg != serve.SignalLogged {
		return "", time.Time{}, false
	}
	return pod, rec.Time, true
}

// loadLogLine parses one line of a load pod's log (a LoadLine), ok false
// for any other line.
func loadLogLine(line string) (LoadLine, bool) {
	var l LoadLine
	if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &l) != nil || l.Kind == "" {
		return LoadLine{}, false
	}
	return l, true
}
