package syncx

import "context"

// AwaitIdle returns nil as soon as idle reports true, re-checking it each
// time w is notified; or ctx.Err() once ctx is done and idle is still false.
// It does not poll: whatever ends in-flight work must notify w after making
// that visible to idle, and AwaitIdle then returns as soon as the last of it
// ends.
func AwaitIdle(ctx context.Context, w Wake, idle func() bool) error {
	for !idle() {
		select {
		case <-w.C():
		case <-ctx.Done():
			if idle() {
				return nil
			}
			return ctx.Err()
		}
	}
	return nil
}
