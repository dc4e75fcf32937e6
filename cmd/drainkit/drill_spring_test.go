//go:build spring

package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/drill"
	"github.com/drainkit/drainkit/internal/toolbin"
)

// These tests drive a real Spring Cloud consumer (tools/springconsumer,
// built by scripts/spring.sh) against a real Nacos server: slow (40 s
// windows), so they run in `make spring`, not `make test` (build tag
// spring). With CI set a missing jar or java fails them.

// springEnv returns the drill's environment for --consumer spring: the
// jar (toolbin: $DRAINKIT_SPRING_JAR, else scripts/spring.sh) and java.
func springEnv(t *testing.T) []string {
	t.Helper()
	if _, err := exec.LookPath("java"); err != nil {
		toolbin.Missing(t, "java not found (apt-get install openjdk-17-jdk-headless)")
	}
	jar := toolbin.Require(t, "drill --consumer spring", drill.EnvSpringJar, "spring.sh")
	return []string{drill.EnvSpringJar + "=" + jar}
}

func TestDrillSpringSmoke(t *testing.T) {
	s := sharedNacos(t)
	env := append(springEnv(t), s.AdminEnv()...)
	r := drainkit(t, 5*time.Minute, env, "drill", "--json", "--strategies", "drainkit", "--consumer", "spring", "--consumer-cache", "0",
		"--nacos", s.Addr, "--replicas", "2", "--rate", "50", "--consumers", "2", "--baseline", "2s", "--tail", "1s")
	out := parseDrill(t, r)
	t.Logf("stderr:\n%s", r.stderr)
	_ = strings.Contains
	_ = out
}
