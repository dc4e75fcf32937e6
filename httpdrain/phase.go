package httpdrain

// phase is a Server's progress through its drain (syncx.Phase); derived
// facts are read from it.
type phase int32

const (
	serving  phase = iota // before LameDuck
	lameDuck              // LameDuck ran (t0): Connection: close, GOAWAY, Draining closed
	closed                // CloseListeners or ForceClose ran: completions wake AwaitIdle
	finished              // AwaitIdle succeeded or ForceClose ran: Serve lingers
	gone                  // finished, and every connection has been closed: Serve returns
)
