package frameworks_test

import (
	"os"
	"strings"
	"testing"
)

// grpcRecipe returns the lines of src from the one starting with
// `drainkit.WithServer("grpc"` to the `}),` that closes it, each trimmed of
// its indentation, or nil.
func grpcRecipe(src string) []string {
	var out []string
	for l := range strings.Lines(src) {
		l = strings.TrimSpace(l)
		if out == nil && !strings.HasPrefix(l, `drainkit.WithServer("grpc"`) {
			continue
		}
		out = append(out, l)
		if l == "})," {
			return out
		}
	}
	return nil
}

// TestReadmeKratosRecipeIsTheExample: the gRPC part of the kratos recipe
// (docs/frameworks.md, linked from the README) is the kratos example's, line for line, so the recipe is what
// TestKratosStreams and the drills run (the recipe once lacked
// kgrpc.Endpoint and crashed on the first stream).
func TestReadmeKratosRecipeIsTheExample(t *testing.T) {
	readme, err := os.ReadFile("../../docs/frameworks.md")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(readme), "\nkratos (`examples/frameworks/kratos`)")
	if i < 0 {
		t.Fatal("docs/frameworks.md has no kratos recipe (a paragraph starting \"kratos (`examples/frameworks/kratos`)\")")
	}
	section := string(readme[i:])
	main, err := os.ReadFile("kratos/main.go")
	if err != nil {
		t.Fatal(err)
	}
	want, got := grpcRecipe(string(main)), grpcRecipe(section)
	if want == nil || got == nil {
		t.Fatalf("no drainkit.WithServer(\"grpc\", ...) call in the example (%d lines) or the docs' recipe (%d lines)", len(want), len(got))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("docs/frameworks.md's kratos recipe and examples/frameworks/kratos/main.go differ:\n--- docs\n%s\n--- main.go\n%s",
			strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
