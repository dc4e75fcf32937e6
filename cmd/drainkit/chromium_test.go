package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/toolbin"
)

// chromiumPath is Debian's chromium (`apt-get install chromium`), or
// $DRAINKIT_CHROMIUM; without either the test is skipped, or fails with CI
// set (toolbin.Missing).
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("DRAINKIT_CHROMIUM"); p != "" {
		return p
	}
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	toolbin.Missing(t, "headless Chromium not found (install Debian's chromium package, apt-get install -y chromium, or set DRAINKIT_CHROMIUM)")
	return ""
}

// errorHook records script errors, failed resource loads, CSP violations and
// console.error/warn calls, and writes them into the DOM at load, where
// --dump-dom shows them.
const errorHook = `<script>
(function(){
  var errs = [];
  function rec(m){ errs.push(String(m)); }
  window.addEventListener('error', function(e){
    rec('error: ' + (e.message || (e.target && (e.target.src || e.target.href)) || 'resource failed'));
  }, true);
  document.addEventListener('securitypolicyviolation', function(e){ rec('csp: ' + e.violatedDirective + ' ' + e.blockedURI); });
  var ce = console.error, cw = console.warn;
  console.error = function(){ rec('console.error: ' + Array.prototype.join.call(arguments, ' ')); ce.apply(console, arguments); };
  console.warn = function(){ rec('console.warn: ' + Array.prototype.join.call(arguments, ' ')); cw.apply(console, arguments); };
  window.addEventListener('load', function(){
    setTimeout(function(){
      var p = document.createElement('pre');
      p.id = 'drainkit-test-errors';
      p.textContent = 'ERRORS[' + errs.join(' | ') + ']';
      document.body.appendChild(p);
    }, 100);
  });
})();
</script>`

var errorsRe = regexp.MustCompile(`(?s)id="drainkit-test-errors">ERRORS\[(.*?)\]</pre>`)

// chromiumSlot lets one Chromium run at a time: the report tests run
// beside the drills, and on 2 cores two browsers starting together with a
// drill under -race were seen to stall one of them past any bound.
var chromiumSlot = make(chan struct{}, 1)

// chromiumAttempt bounds one Chromium run. A healthy run takes 2-15 s on a
// busy 2-core machine; a run past this has hung (seen once in CI, headless
// Chromium 156 with --virtual-time-budget, at 90 s), not slowed down.
const chromiumAttempt = 60 * time.Second

// chromium runs headless Chromium with args on url, bounded, in its own
// process group, and returns its stdout and stderr. A run that hangs past
// chromiumAttempt is killed and tried once more with a fresh profile (the
// test logs it): the hang is the browser's, and what the test checks is the
// page, which a second run renders. A run that fails any other way fails
// the test at once.
func chromium(t *testing.T, dir string, args ...string) (string, string) {
	t.Helper()
	bin := chromiumPath(t)
	chromiumSlot <- struct{}{}
	defer func() { <-chromiumSlot }()
	for attempt := 1; ; attempt++ {
		stdout, stderr, err := chromiumOnce(bin, filepath.Join(dir, "profile"+strconv.Itoa(attempt)), args)
		if err == nil {
			return stdout, stderr
		}
		if errors.Is(err, context.DeadlineExceeded) && attempt == 1 {
			t.Logf("chromium %v hung for %v (attempt 1 of 2; killed, trying once more); its stderr:\n%s", args, chromiumAttempt, lastLines(stderr, 20))
			continue
		}
		t.Fatalf("chromium %v (attempt %d): %v\n%s", args, attempt, err, stderr)
	}
}

// chromiumOnce is one bounded Chromium run with its own profile directory;
// its error wraps context.DeadlineExceeded when the bound killed it.
func chromiumOnce(bin, profile string, args []string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), chromiumAttempt)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir=" + profile,
		"--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err := cmd.Run()
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return stdout.String(), stderr.String(), err
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// pageErrors loads page (an HTML file) in headless Chromium with errorHook
// injected and returns the errors it saw: the hook's list and the console
// messages Chromium logged at error level.
func pageErrors(t *testing.T, page string) (errs []string, dom string) {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	// Let the injected hook (only it) run under the page's own policy.
	html = strings.Replace(html, "default-src 'none'", "default-src 'none'; script-src 'unsafe-inline'", 1)
	i := strings.Index(html, "<head>")
	if i < 0 {
		t.Fatalf("%s has no <head>", page)
	}
	html = html[:i+len("<head>")] + errorHook + html[i+len("<head>"):]
	hooked := filepath.Join(dir, "hooked.html")
	if err := os.WriteFile(hooked, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, stderr := chromium(t, dir, "--virtual-time-budget=5000", "--dump-dom", "file://"+hooked)
	m := errorsRe.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the error hook did not report (did the page load?)\nDOM head: %.500s\nstderr:\n%s", dom, stderr)
	}
	if m[1] != "" {
		errs = append(errs, strings.Split(m[1], " | ")...)
	}
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, ":CONSOLE(") && !strings.Contains(line, "INFO:CONSOLE") {
			errs = append(errs, line)
		}
	}
	return errs, dom
}

// screenshot renders page in a 1200x2600 window and returns the decoded PNG.
func screenshot(t *testing.T, page, out string) image.Image {
	t.Helper()
	return screenshotSized(t, page, out, "1200,2600")
}

// screenshotSized renders page in a window of size ("W,H") and returns the
// decoded PNG.
func screenshotSized(t *testing.T, page, out, size string) image.Image {
	t.Helper()
	dir := t.TempDir()
	chromium(t, dir, "--window-size="+size, "--hide-scrollbars", "--screenshot="+out, "file://"+page)
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", out, err)
	}
	return img
}

// inkRatio is the share of pixels that are not (near) white.
func inkRatio(img image.Image) float64 {
	b := img.Bounds()
	ink, all := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			all++
			if r < 0xe000 || g < 0xe000 || bl < 0xe000 {
				ink++
			}
		}
	}
	return float64(ink) / float64(all)
}

// checkReportInChromium asserts that the report renders its charts in
// headless Chromium without console errors and screenshots to a non-empty
// image. keep, if set, receives a copy of the screenshot.
func checkReportInChromium(t *testing.T, report, keep string) {
	t.Helper()
	errs, dom := pageErrors(t, report)
	if len(errs) > 0 {
		t.Errorf("console errors in the report:\n%s", strings.Join(errs, "\n"))
	}
	if n := strings.Count(dom, "<svg"); n == 0 {
		t.Errorf("the rendered DOM has no chart")
	}
	// Every fault's four instants, in the events table under its chart.
	for _, want := range []string{"registry decision", "first consumer view without", "last request to old address", "failures per second from the fault"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered DOM lacks the events' %q", want)
		}
	}
	shot := filepath.Join(t.TempDir(), "report.png")
	img := screenshot(t, report, shot)
	if b := img.Bounds(); b.Dx() < 1000 || b.Dy() < 2000 {
		t.Fatalf("screenshot is %v", b)
	}
	if r := inkRatio(img); r < 0.02 {
		t.Fatalf("screenshot is %.1f%% ink: the page looks blank", 100*r)
	}
	if keep != "" {
		if b, err := os.ReadFile(shot); err == nil {
			_ = os.WriteFile(keep, b, 0o644)
		}
	}
	// The comparison of the strategies is in the first screen: the lines
	// of the shutdown and exit strategies (red and orange in the
	// comparison chart) show in a laptop-sized window.
	first := screenshotSized(t, report, filepath.Join(t.TempDir(), "first.png"), "1200,800")
	for name, c := range map[string][3]uint32{"red (shutdown)": {0xd6, 0x27, 0x28}, "orange (exit)": {0xff, 0x7f, 0x0e}} {
		if n := colorPixels(first, c); n < 20 {
			t.Errorf("first screen has %d %s pixels: the comparison chart is not in it", n, name)
		}
	}
}

// colorPixels counts the pixels within a small distance of c (8-bit RGB).
func colorPixels(img image.Image, c [3]uint32) int {
	b := img.Bounds()
	n := 0
	near := func(v, want uint32) bool { v >>= 8; return v+24 >= want && v <= want+24 }
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near(r, c[0]) && near(g, c[1]) && near(bl, c[2]) {
				n++
			}
		}
	}
	return n
}

// TestChromiumErrorDetection is the negative control: a page with a blocked
// external image, a console.error and a script error must be reported, so the
// report test can fail.
func TestChromiumErrorDetection(t *testing.T) {
	parallelDrill(t, 300)
	dir := t.TempDir()
	page := filepath.Join(dir, "bad.html")
	html := `<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"></head>
<body><p>bad page</p><img src="http://127.0.0.1:1/external.png">
<script>console.error("boom from the page"); undefinedFunction();</script></body></html>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	errs, _ := pageErrors(t, page)
	joined := strings.Join(errs, "\n")
	for _, want := range []string{"boom from the page", "undefinedFunction", "127.0.0.1:1"} {
		if !strings.Contains(joined, want) {
			t.Errorf("detector missed %q; it saw:\n%s", want, joined)
		}
	}
}
