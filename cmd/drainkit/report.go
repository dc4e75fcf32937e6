package main

import (
	"os"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/drill"
)

// writeReport writes the HTML report to path.
func writeReport(path string, res *drill.Result, sums []drill.Summary) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := drill.WriteHTML(f, res, sums); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
