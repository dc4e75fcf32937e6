package childtest

import "time"

// CleanDrain waits up to d for the child to exit and returns the timeline's
// "deregistered", "confirmed" and "window_ended" steps. It fails the test
// unless the exit code is 0, all three steps are recorded and the first two
// carry no error. Judging the offsets is the caller's part.
func (c *Child) CleanDrain(d time.Duration) (dereg, conf, win Step) {
	c.t.Helper()
	if code := c.WaitExit(d); code != 0 {
		c.t.Fatalf("exit code %d", code)
	}
	dereg, conf, win = c.TimelineStep("deregistered"), c.TimelineStep("confirmed"), c.TimelineStep("window_ended")
	if !dereg.OK || !conf.OK || !win.OK || dereg.Err != "" || conf.Err != "" {
		c.t.Fatalf("timeline: deregistered %+v confirmed %+v window_ended %+v", dereg, conf, win)
	}
	return dereg, conf, win
}

// DrainRegistryDown checks the drain of a child run with Timings that was
// signalled at sig while its registry was down: it waits up to Budget + 5 s
// for the exit and fails the test unless the exit code is 0, the exit came
// within Budget of sig, and the "deregistered" step records a failure within
// PropagationMax + 1 s. It logs "drain with <registry> down: ...; <dereg>
// gave up at ..." (registry such as "the agent", dereg such as
// "deregistration") and returns the step. The registry's own log line is
// the caller's to check.
func (c *Child) DrainRegistryDown(sig time.Time, registry, dereg string) Step {
	c.t.Helper()
	code := c.WaitExit(Budget + 5*time.Second)
	took := time.Since(sig)
	if code != 0 {
		c.t.Fatalf("exit code %d", code)
	}
	step := c.TimelineStep("deregistered")
	c.t.Logf("drain with %s down: exit after %s (budget %s); %s gave up at %s: %s", registry, took.Round(time.Millisecond), Budget, dereg, step.At, step.Err)
	if took > Budget {
		c.t.Fatalf("exit after %s, over the budget %s", took, Budget)
	}
	if !step.OK || step.Err == "" || step.At > PropagationMax+time.Second {
		c.t.Fatalf("deregistered step %+v; want a failure within propagation.max", step)
	}
	return step
}
