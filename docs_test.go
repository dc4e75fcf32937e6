package drainkit_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/drainkit/drainkit/config"
)

// readmeMaxLines is how long README.md may grow: a newcomer reads it to the
// end; what does not fit has a page of its own under docs/.
const readmeMaxLines = 400

// TestReadmeLength: README.md has at most readmeMaxLines lines.
func TestReadmeLength(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, want <= %d: move a topic to docs/", n, readmeMaxLines)
	}
}

// TestRegistriesDocListsEtcdKeys: docs/registries.md's list of the
// registry.etcd.* keys names every key config defines (registry.etcd.version
// was missing from it).
func TestRegistriesDocListsEtcdKeys(t *testing.T) {
	b, err := os.ReadFile("docs/registries.md")
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok := strings.Cut(string(b), "(`registry.etcd.*` keys:")
	list, _, _ = strings.Cut(list, "The drain revokes")
	if !ok {
		t.Fatal("docs/registries.md has no list of `registry.etcd.*` keys")
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(list, -1) {
		named[m[1]] = true
	}
	for _, k := range config.KeysUnder("registry.etcd.") {
		if !named[strings.TrimPrefix(k, "registry.etcd.")] {
			t.Errorf("docs/registries.md's list of registry.etcd.* keys lacks %s", k)
		}
	}
}

// TestDocLinks: every relative link of README.md, docs/*.md and the
// examples' READMEs the README links to resolves: the
// file or directory exists, and a #fragment names a heading of the target
// (of the page itself for a bare #fragment) by GitHub's anchor rules.
func TestDocLinks(t *testing.T) {
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages := append([]string{"README.md", "examples/README.md", "examples/kubernetes/README.md"}, docs...)
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range markdownLinks(string(b)) {
			if strings.Contains(l.target, "://") || strings.HasPrefix(l.target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(l.target, "#")
			file := page
			if path != "" {
				file = filepath.Join(filepath.Dir(page), filepath.FromSlash(path))
				if _, err := os.Stat(file); err != nil {
					t.Errorf("%s:%d: link %q: %v", page, l.line, l.target, err)
					continue
				}
			}
			if frag == "" {
				continue
			}
			if !strings.HasSuffix(file, ".md") {
				t.Errorf("%s:%d: link %q: a fragment on a file that is not Markdown", page, l.line, l.target)
				continue
			}
			target, err := os.ReadFile(file)
			if err != nil {
				t.Errorf("%s:%d: link %q: %v", page, l.line, l.target, err)
				continue
			}
			if anchors := headingAnchors(string(target)); !anchors[frag] {
				t.Errorf("%s:%d: link %q: %s has no heading with anchor #%s", page, l.line, l.target, file, frag)
			}
		}
	}
}

type mdLink struct {
	target string
	line   int
}

// inlineLink matches [text](target): text without brackets (a link inside
// a link's text is not used here), target without spaces or parentheses.
var inlineLink = regexp.MustCompile(`\[[^\[\]]*\]\(([^()\s]+)\)`)

// markdownLinks returns the inline links of a Markdown text outside fenced
// code blocks and inline code spans.
func markdownLinks(text string) []mdLink {
	var links []mdLink
	for i, line := range markdownProse(text) {
		if line == "" {
			continue
		}
		for _, m := range inlineLink.FindAllStringSubmatch(stripCodeSpans(line), -1) {
			links = append(links, mdLink{m[1], i + 1})
		}
	}
	return links
}

// markdownProse returns text's lines with the lines of fenced code blocks
// (and their fences) blanked, so that indexes stay line numbers - 1.
func markdownProse(text string) []string {
	lines := strings.Split(text, "\n")
	fence := ""
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			lines[i] = ""
		case strings.HasPrefix(trimmed, "```"), strings.HasPrefix(trimmed, "~~~"):
			fence = trimmed[:3]
			lines[i] = ""
		}
	}
	return lines
}

// stripCodeSpans removes `code` spans from a line.
func stripCodeSpans(line string) string {
	var b strings.Builder
	in := false
	for _, r := range line {
		if r == '`' {
			in = !in
			continue
		}
		if !in {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// headingAnchors returns the anchors GitHub gives the ATX headings of a
// Markdown text: the heading's text lower-cased, without characters other
// than letters, digits, spaces, '-' and '_', spaces turned into '-', and a
// repeated anchor suffixed -1, -2, ...
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, l := range markdownProse(text) {
		level := len(l) - len(strings.TrimLeft(l, "#"))
		if level == 0 || level > 6 || !strings.HasPrefix(l[level:], " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(l[level:])) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

// TestHeadingAnchors: the anchor rules on headings whose anchors GitHub
// showed.
func TestHeadingAnchors(t *testing.T) {
	got := headingAnchors("# drainkit\n## Try it\n## Registries: Consul, etcd, Nacos\n```\n# not a heading\n```\n### `drainkit check` in CI\n## Try it\n#hashtag\n")
	for _, want := range []string{"drainkit", "try-it", "registries-consul-etcd-nacos", "drainkit-check-in-ci", "try-it-1"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] || got["hashtag"] {
		t.Errorf("anchors from a code block or a non-heading: %v", got)
	}
}
