package grpcdrain

// phase is a Server's progress through its drain (syncx.Phase). Derived
// facts are read from it: health Watch streams and accepting end with
// closed; completions wake AwaitIdle from closed on.
type phase int32

const (
	serving  phase = iota // before LameDuck
	lameDuck              // LameDuck ran (t0): health NOT_SERVING, GOAWAY, Draining closed
	closed                // the listener was closed by CloseListeners or ForceClose
	finished              // AwaitIdle succeeded or ForceClose ran: Serve reaps and returns
)
