package kubedrill

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"strings"
	"time"
)

// rulesEvery is how often the drill reads kube-proxy's rules: well below
// the second a Service's request rate puts between two requests to one pod.
const rulesEvery = 100 * time.Millisecond

// parseNAT reads `iptables-save -t nat` as kube-proxy's iptables mode
// writes it and returns each Service port's endpoint IPs (keyed by the
// rules' comment, "namespace/name:port") as kube-proxy balances it now:
// KUBE-SERVICES jumps to the Service's KUBE-SVC- chain, which jumps to one
// KUBE-SEP- chain per endpoint it picks, whose DNAT names the pod's
// address. An endpoint kube-proxy has dropped from the KUBE-SVC- chain is
// not listed even while its KUBE-SEP- chain still exists.
func parseNAT(save []byte) map[string]map[string]bool {
	svcOf := map[string]string{}  // KUBE-SVC- chain -> Service port
	seps := map[string][]string{} // KUBE-SVC- chain -> KUBE-SEP- chains
	dest := map[string]string{}   // KUBE-SEP- chain -> IP
	sc := bufio.NewScanner(bytes.NewReader(save))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		f := ruleFields(sc.Text())
		if len(f) < 2 || f[0] != "-A" {
			continue
		}
		chain, jump := f[1], flagValue(f, "-j")
		switch {
		case chain == "KUBE-SERVICES" && strings.HasPrefix(jump, "KUBE-SVC-"):
			if c, ok := strings.CutSuffix(flagValue(f, "--comment"), " cluster IP"); ok {
				svcOf[jump] = c
			}
		case strings.HasPrefix(chain, "KUBE-SVC-") && strings.HasPrefix(jump, "KUBE-SEP-"):
			seps[chain] = append(seps[chain], jump)
		case strings.HasPrefix(chain, "KUBE-SEP-") && jump == "DNAT":
			if host, _, err := net.SplitHostPort(flagValue(f, "--to-destination")); err == nil {
				dest[chain] = host
			}
		}
	}
	out := map[string]map[string]bool{}
	for svc, name := range svcOf {
		ips := map[string]bool{}
		for _, sep := range seps[svc] {
			if ip := dest[sep]; ip != "" {
				ips[ip] = true
			}
		}
		out[name] = ips
	}
	return out
}

// ruleFields splits an iptables-save line into fields, keeping a quoted
// comment as one field without its quotes.
func ruleFields(line string) []string {
	var out []string
	for line = strings.TrimSpace(line); line != ""; line = strings.TrimSpace(line) {
		if line[0] == '"' {
			end := strings.IndexByte(line[1:], '"')
			if end < 0 {
				return append(out, line[1:])
			}
			out = append(out, line[1:end+1])
			line = line[end+2:]
			continue
		}
		f, rest, _ := strings.Cut(line, " ")
		out = append(out, f)
		line = rest
	}
	return out
}

// flagValue returns the field after flag, "" if none.
func flagValue(f []string, flag string) string {
	for i := 0; i+1 < len(f); i++ {
		if f[i] == flag {
			return f[i+1]
		}
	}
	return ""
}

// rulesReadable reports whether this process can read kube-proxy's
// iptables rules: root, iptables-save on PATH and a KUBE-SERVICES chain in
// its network namespace (the drill runs on the node, in its namespace).
func rulesReadable(ctx context.Context) bool {
	if os.Geteuid() != 0 {
		return false
	}
	out, err := exec.CommandContext(ctx, "iptables-save", "-t", "nat").Output()
	return err == nil && bytes.Contains(out, []byte(":KUBE-SERVICES"))
}

// pollRules reads kube-proxy's rules every rulesEvery until ctx ends and
// folds each read into t.
func pollRules(ctx context.Context, t *tracker, namespace string) {
	tick := time.NewTicker(rulesEvery)
	defer tick.Stop()
	for {
		out, err := exec.CommandContext(ctx, "iptables-save", "-t", "nat").Output()
		if err == nil {
			t.onRules(time.Now(), namespace, parseNAT(out))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
