package main

import (
	"bytes"
	"strings"
	"testing"
)

// drill --kubernetes checks its flags before it touches a cluster: no
// image, or a strategy the cluster drill does not have, is bad usage (exit
// 2) naming the flag, and the drill's own defaults (exit among the
// strategies) do not leak into it.
func TestDrillKubernetesFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"drill", "--kubernetes"}, "--image"},
		{[]string{"drill", "--kubernetes", "--image", "x:1", "--strategies", "drainkit,exit"}, `--strategies: "exit"`},
		{[]string{"drill", "--kubernetes", "--image", "x:1", "--prestop-sleep", "2500ms"}, "--prestop-sleep"},
		{[]string{"drill", "--kubernetes", "--image", "x:1", "--kube-load", "pigeon"}, "--kube-load"},
		{[]string{"drill", "--kubernetes", "--image", "x:1", "--replicas", "1"}, "--replicas"},
		{[]string{"drill", "--kubernetes", "--image", "x:1", "--exec", "./svc"}, "--exec is not supported with --kubernetes"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q: want 2 naming %s", tc.args, code, stderr.String(), tc.want)
		}
	}
}
