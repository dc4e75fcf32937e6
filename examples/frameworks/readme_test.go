package frameworks_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// grpcAddr is the address argument of a `drainkit.WithServer("grpc", ...`
// line, which the kratos recipes choose each their own way.
var grpcAddr = regexp.MustCompile(`^(drainkit\.WithServer\("grpc", )[^,]+,`)

// grpcRecipe returns the lines of src from the one starting with
// `drainkit.WithServer("grpc"` to the `}),` that closes it, each trimmed of
// its indentation, the first with its address replaced by ADDR, or nil.
func grpcRecipe(src string) []string {
	var out []string
	for l := range strings.Lines(src) {
		l = strings.TrimSpace(l)
		if out == nil && !strings.HasPrefix(l, `drainkit.WithServer("grpc"`) {
			continue
		}
		if out == nil {
			l = grpcAddr.ReplaceAllString(l, "${1}ADDR,")
		}
		out = append(out, l)
		if l == "})," {
			return out
		}
	}
	return nil
}

// TestReadmeKratosRecipeIsTheExample: the gRPC part of the kratos recipe
// (docs/frameworks.md, linked from the README) and of the kratos-layout
// example's newApp are the kratos example's, line for line but for the
// address, so the recipe is what TestKratosStreams, TestKratosLayoutServes
// and the drills run (the recipe once lacked kgrpc.Endpoint and crashed on
// the first stream).
func TestReadmeKratosRecipeIsTheExample(t *testing.T) {
	section := docSection(t, "\nkratos (`examples/frameworks/kratos`)")
	want := grpcRecipe(readFile(t, "kratos/main.go"))
	for where, got := range map[string][]string{
		"docs/frameworks.md's kratos recipe":                  grpcRecipe(section),
		"examples/frameworks/kratoslayout/cmd/server/main.go": grpcRecipe(readFile(t, "kratoslayout/cmd/server/main.go")),
	} {
		if want == nil || got == nil {
			t.Fatalf("no drainkit.WithServer(\"grpc\", ...) call in the example (%d lines) or %s (%d lines)", len(want), where, len(got))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s and examples/frameworks/kratos/main.go differ:\n--- %[1]s\n%s\n--- kratos/main.go\n%s",
				where, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// TestDocsKratosLayoutIsTheExample: every Go block of docs/frameworks.md's
// "kratos-layout with wire" is quoted from examples/frameworks/kratoslayout,
// which kratoslayout_test.go builds and runs: the recipe once built the
// server without kgrpc.Endpoint and crashed on the first stream, although
// its pieces compiled.
func TestDocsKratosLayoutIsTheExample(t *testing.T) {
	section := docSection(t, "\n## kratos-layout with wire\n")
	if j := strings.Index(section[1:], "\n## "); j >= 0 {
		section = section[:j+1]
	}
	var sources []string
	err := filepath.WalkDir("kratoslayout", func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".go") {
			sources = append(sources, readFile(t, path))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	blocks := goBlocks(section)
	if len(blocks) < 3 {
		t.Fatalf("the kratos-layout section has %d Go blocks, want its 3 steps'", len(blocks))
	}
	for _, b := range blocks {
		if !slices.ContainsFunc(sources, func(src string) bool { return quotes(codeLines(src), b) }) {
			t.Errorf("docs/frameworks.md's kratos-layout block is not code of examples/frameworks/kratoslayout:\n%s", strings.Join(b, "\n"))
		}
	}
}

// docSection returns docs/frameworks.md from the heading or paragraph that
// starts with start.
func docSection(t *testing.T, start string) string {
	t.Helper()
	doc := readFile(t, "../../docs/frameworks.md")
	i := strings.Index(doc, start)
	if i < 0 {
		t.Fatalf("docs/frameworks.md has no %q", strings.TrimSpace(start))
	}
	return doc[i:]
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// goBlocks returns md's ```go blocks, each as codeLines.
func goBlocks(md string) [][]string {
	var out [][]string
	var block []string
	in := false
	for l := range strings.Lines(md) {
		switch t := strings.TrimSpace(l); {
		case !in && t == "```go":
			in, block = true, nil
		case in && t == "```":
			in = false
			out = append(out, codeLines(strings.Join(block, "")))
		case in:
			block = append(block, l)
		}
	}
	return out
}

// elision is a quoted block's line standing for lines left out.
const elision = "// ..."

// codeLines returns src's lines trimmed of their indentation, without blank
// lines and whole-line comments, which a quote may word its own way; an
// elision line stays.
func codeLines(src string) []string {
	var out []string
	for l := range strings.Lines(src) {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "//") && !strings.HasPrefix(l, elision) {
			continue
		}
		out = append(out, l)
	}
	return out
}

// quotes reports whether block's lines stand in src's, in order and
// contiguous but where block has an elision line, which stands for any
// lines.
func quotes(src, block []string) bool {
	var chunks [][]string
	chunk := []string{}
	for _, l := range block {
		if strings.HasPrefix(l, elision) {
			chunks, chunk = append(chunks, chunk), []string{}
			continue
		}
		chunk = append(chunk, l)
	}
	at := 0
	for _, c := range append(chunks, chunk) {
		j := index(src[at:], c)
		if j < 0 {
			return false
		}
		at += j + len(c)
	}
	return true
}

// index returns where sub first stands in s, or -1.
func index(s, sub []string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if slices.Equal(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}
