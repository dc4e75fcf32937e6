//go:build go1.26

package grpcdrain_test

// notifyContextCause: since Go 1.26, signal.NotifyContext cancels its
// context with a cause naming the signal, which noteCancelled tells from a
// client's cancellation.
const notifyContextCause = true
