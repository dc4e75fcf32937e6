// Package probes serves a drainkit instance's admin listener: the Kubernetes
// probes (/startupz, /readyz, /livez), GET /state, and the operator actions
// POST /drain, /eject and /restore (DESIGN.md section 2).
//
// Status codes per lifecycle state:
//
//	path       STARTING READY EJECTED DRAINING STOPPED
//	/startupz  503      200   200     200      503
//	/readyz    503      200   503     503      503
//	/livez     200      200   200     200      503
//	/servingz  503      200   503     200*     503
//
// * /servingz, the Kubernetes readinessProbe, passes in DRAINING while a
// drain the kubelet started (the preStop hook's POST /drain?wait=propagation,
// or a signal) has its listeners open, and fails otherwise (see
// Options.ServingzFailsDraining and DESIGN.md section 2): a terminating pod
// keeps its EndpointSlice "serving" condition, which kube-proxy falls back to
// when no endpoint is ready (KEP-1669).
//
// /livez also fails when the liveness watchdog stops ticking (see
// Options.WatchdogThreshold); it never fails because a dependency is down or
// because the instance is draining. The probe handlers read cached state only:
// the readiness checks run in the background inside the lifecycle, and a probe
// never calls a dependency.
//
// Serve the Handler on its own listener (the admin listener), not on the
// service's public one, and keep serving it through the whole drain: close it
// after lifecycle.Lifecycle.Run returns.
//
// A loopback peer is not an identity where a proxy on the same host forwards
// remote traffic: behind a service-mesh sidecar (Istio, for one, delivers
// inbound connections from 127.0.0.6) any caller the mesh admits would pass
// the loopback rule. Configure Options.Token there, or keep the admin port out
// of the mesh's inbound capture.
package probes
