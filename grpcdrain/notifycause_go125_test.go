//go:build !go1.26

package grpcdrain_test

// notifyContextCause: before Go 1.26, signal.NotifyContext cancels its
// context with context.Canceled alone, which noteCancelled cannot tell from
// a client's cancellation (its documented limit), so such a call is not
// counted as cancelled early.
const notifyContextCause = false
