// Command minimal is the README's "Use" program, verbatim: an HTTP service
// drained by drainkit. Flags: --http-addr, --admin-addr, --config and one
// per drainkit key (see --help); DRAINKIT_* variables work too.
package main
