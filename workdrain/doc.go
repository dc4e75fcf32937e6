// Package workdrain drains background work (queue consumers, pollers,
// tickers, loops) with the same lifecycle as the servers: a rolling restart
// loses no message and cuts no unit of work that could finish.
//
// A Worker is a lifecycle.Server with no listener. Its run function is an
// oklog/run actor: it takes work until its context is done, then returns.
// What "stop" means is explicit, as in river's soft stop, asynq's
// stop-fetching signal or NATS's Drain:
//
//	t0 (AtDrainStart) or window end (AtWindowEnd)
//	   -> stop taking: run's context is cancelled (cause ErrStopped), Begin
//	      and Do refuse new units, the queue's consumer hands them back
//	-> the units already taken finish, within drain.timeout
//	-> drain.timeout reached: the units' context is cancelled (cause
//	   ErrDrainTimeout), the units still running count as force-closed
//	   (Timeline.ForceClosed, exit code 1)
//
// Units in flight show in GET /state and the timeline as in_flight.work.
// A ticker is a loop whose every tick is one unit:
//
//	w := workdrain.New(workdrain.AtDrainStart, func(ctx context.Context, w *workdrain.Worker) error {
//		t := time.NewTicker(time.Minute)
//		defer t.Stop()
//		for {
//			select {
//			case <-ctx.Done():
//				return nil
//			case <-t.C:
//				_ = w.Do(compact) // compact(ctx) gets the unit's context
//			}
//		}
//	})
//	lc.AddServer("compactor", w) // or drainkit.WithWorker("compactor", w)
//
// Out of scope: retries, scheduling and queue semantics. A queue consumer
// hands back (nak) what it could not take or finish; natsdrain (its own
// module, github.com/drainkit/drainkit/workdrain/natsdrain) does this for
// NATS JetStream.
package workdrain
