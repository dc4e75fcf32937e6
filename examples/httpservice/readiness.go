package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// fileCheck is a readiness check (drainkit.WithCheck) that fails while path
// exists, so that an operator or a test can flip readiness from outside the
// process.
func fileCheck(path string) func(context.Context) error {
	return func(context.Context) error {
		_, err := os.Stat(path)
		switch {
		case err == nil:
			return fmt.Errorf("%s exists", path)
		case errors.Is(err, fs.ErrNotExist):
			return nil
		default:
			return err
		}
	}
}
