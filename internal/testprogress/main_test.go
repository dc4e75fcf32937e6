package main

import (
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestReportPrintsEachPackageAsItFinishes: a package's line comes at its
// own pass or fail event, in the order the packages finished; a failed
// package's output comes with it, a passed one's not; build errors are
// shown; the result says whether anything failed.
func TestReportPrintsEachPackageAsItFinishes(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"start","Package":"a/slow"}`,
		`{"Action":"output","Package":"a/slow","Test":"TestX","Output":"=== RUN TestX\n"}`,
		`{"Action":"output","Package":"a/fast","Output":"noise of a passing package\n"}`,
		`{"Action":"pass","Package":"a/fast","Elapsed":0.5}`,
		`{"Action":"skip","Package":"a/none","Output":"?   \ta/none\t[no test files]\n"}`,
		`{"Action":"output","Package":"a/slow","Test":"TestX","Output":"    x_test.go:9: boom\n"}`,
		`{"Action":"fail","Package":"a/slow","Test":"TestX","Elapsed":700}`,
		`{"Action":"fail","Package":"a/slow","Elapsed":790.25}`,
		`{"ImportPath":"a/broken","Action":"build-output","Output":"a/broken/x.go:1:1: syntax error\n"}`,
		`{"ImportPath":"a/broken","Action":"build-fail"}`,
		`not json: go: warning: "./nothing/..." matched no packages`,
	}, "\n")
	var out strings.Builder
	failed, err := report(strings.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	want := "ok  \ta/fast\t0.500s\n" +
		"=== RUN TestX\n    x_test.go:9: boom\nFAIL\ta/slow\t790.250s\n" +
		"a/broken/x.go:1:1: syntax error\n" +
		"not json: go: warning: \"./nothing/...\" matched no packages\n"
	if !failed || out.String() != want {
		t.Errorf("failed %v, output:\n%s\nwant failed, output:\n%s", failed, out.String(), want)
	}
	failed, err = report(strings.NewReader(`{"Action":"pass","Package":"a/fast","Elapsed":1}`), &out)
	if failed || err != nil {
		t.Errorf("a passing run: failed %v, %v", failed, err)
	}
}
