package config_test

import "fmt"

// fmtAll prints v with every common verb.
func fmtAll(v any) string {
	return fmt.Sprintf("%v %+v %#v %s %q %x", v, v, v, v, v, v)
}
