package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/testpoll"
)

// TestDrillNacosOfflineThenKill reproduces the first incident behind
// drainkit with the drill against a real Nacos server: replicas register in
// Nacos, and each old one is marked offline through the server's open API
// (the console's "offline"), then kill -9'd. Naive consumers, polling the
// open API every 5 s as a Nacos 1.x client does, fail requests (connection
// refused) until their next poll; drainkit consumers on registry/nacos's
// Source fail none. The same drill, run twice: once per consumer kind. The
// server has Nacos 3's shipped defaults: the drill logs in as its admin
// (DRAINKIT_REGISTRY_NACOS_USERNAME and _PASSWORD) for the console's
// offline, as an operator does.
func TestDrillNacosOfflineThenKill(t *testing.T) {
	s := sharedNacos(t)
	args := []string{"drill", "--json", "--strategies", "offline-kill", "--replicas", "3", "--nacos", s.Addr,
		"--request-timeout", "10s", "--baseline", "1s", "--tail", "1s"}
	failed := map[string]int{}
	for _, kind := range []string{"naive", "drainkit"} {
		r := drainkit(t, 3*time.Minute, s.AdminEnv(), append(args, "--consumer", kind)...)
		out := parseDrill(t, r)
		if strings.Contains(r.stdout+r.stderr, s.AdminPassword) {
			t.Errorf("%s: the drill printed the Nacos password", kind)
		}
		if out.Config["discovery"] != "nacos" || out.Config["nacos"] != s.Addr || out.Config["nacos_poll_s"] != 5.0 {
			t.Errorf("%s: config %v", kind, out.Config)
		}
		if len(out.Strategies) != 1 || out.Strategies[0].Name != "offline-kill" {
			t.Fatalf("%s: strategies %+v, want offline-kill", kind, out.Strategies)
		}
		st := out.Strategies[0]
		failed[kind] = st.Failed
		t.Logf("%s consumers: %d failed of %d (%v); verdict %s", kind, st.Failed, st.Requests, st.FailuresByKind, st.Verdict)
		if st.Requests < 1000 {
			t.Errorf("%s: %d requests, want >= 1000", kind, st.Requests)
		}
		if kind == "naive" && !strings.Contains(st.Verdict, "an operator must wait") {
			t.Errorf("naive: the verdict does not say what the operator must wait: %s", st.Verdict)
		}
		wantCode := map[string]int{"naive": 1, "drainkit": 0}[kind]
		if r.code != wantCode {
			t.Errorf("%s: exit status %d, want %d\nstderr:\n%s", kind, r.code, wantCode, r.stderr)
		}
		for _, rp := range st.Replicas {
			if rp.Role != "initial" {
				continue
			}
			if rp.Offline == nil || rp.SIGTERM == nil || rp.Signal != "SIGKILL" || *rp.SIGTERM < *rp.Offline {
				t.Errorf("%s: r%d: offline at %v, %s at %v: want the console's offline, then SIGKILL", kind, rp.ID, rp.Offline, rp.Signal, rp.SIGTERM)
			}
		}
	}
	if failed["naive"] == 0 {
		t.Error("the naive consumers failed no request: the incident was not reproduced")
	}
	if failed["drainkit"] != 0 {
		t.Errorf("the drainkit consumers failed %d requests, want 0", failed["drainkit"])
	}
}

// TestServeNacosOperatorOffline: `drainkit serve --strategy drainkit`
// registers in Nacos when NACOS_SERVER_ADDR is set, and an operator's
// offline in the console (the admin API's enabled=false) ejects it: GET
// /state shows EJECTED with cause operator, and readiness fails, until the
// operator puts it online again. The server has Nacos 3's shipped defaults:
// the operator and the instance's read-back use the admin's login.
func TestServeNacosOperatorOffline(t *testing.T) {
	s := sharedNacos(t)
	const svc = "serve-offline"
	admin, _ := startExample(t, append(s.AdminEnv(), "DRAINKIT_REGISTRY_SERVICE="+svc, "CONSUL_HTTP_ADDR=", "ETCD_ENDPOINTS=")...)
	var port string
	testpoll.Eventually(t, 10*time.Second, "registered in Nacos", func() (bool, string) {
		var l struct {
			Hosts []struct {
				Port int `json:"port"`
			} `json:"hosts"`
		}
		err := nacosCall(http.MethodGet, s.BaseURL+"/v1/ns/instance/list", url.Values{"serviceName": {svc}}, &l)
		if err == nil && len(l.Hosts) == 1 {
			port = strconv.Itoa(l.Hosts[0].Port)
		}
		return port != "", fmt.Sprint(l, err)
	})
	setEnabled := func(enabled bool) {
		q := url.Values{"serviceName": {svc}, "ip": {"127.0.0.1"}, "port": {port}, "ephemeral": {"true"},
			"enabled": {strconv.FormatBool(enabled)}, "weight": {"1"}}
		// Refused until the server's Raft group has elected itself.
		testpoll.Eventually(t, 30*time.Second, "PUT /v3/admin/ns/instance enabled="+strconv.FormatBool(enabled), func() (bool, string) {
			var r struct {
				Code int `json:"code"`
			}
			tok, err := s.AdminToken(context.Background())
			if err == nil {
				q.Set("accessToken", tok)
				err = nacosCall(http.MethodPut, s.BaseURL+"/v3/admin/ns/instance", q, &r)
			}
			return err == nil && r.Code == 0, fmt.Sprint(err, r)
		})
	}
	state := func(want, cause string) {
		testpoll.Eventually(t, 10*time.Second, "state "+want, func() (bool, string) {
			var st struct {
				State string `json:"state"`
				Cause string `json:"cause"`
			}
			err := nacosCall(http.MethodGet, "http://"+admin+"/state", nil, &st)
			return err == nil && st.State == want && st.Cause == cause, fmt.Sprint(st, err)
		})
	}
	setEnabled(false)
	state("EJECTED", "operator")
	setEnabled(true)
	state("READY", "operator")
}

// nacosCall sends method u?q and decodes a 200's JSON body into out.
func nacosCall(method, u string, q url.Values, out any) error {
	req, err := http.NewRequest(method, u+"?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Timeout: 3 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %s", method, u, resp.Status, b)
	}
	return json.Unmarshal(b, out)
}
