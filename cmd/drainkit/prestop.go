package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/drainkit/drainkit/config"
	"github.com/spf13/cobra"
)

// prestopOptions configure `drainkit prestop`.
type prestopOptions struct {
	adminAddr      string
	token          string
	connectTimeout time.Duration
	timeout        time.Duration
}

func newPrestopCmd(stdout, stderr io.Writer) *cobra.Command {
	o := prestopOptions{}
	cmd := &cobra.Command{
		Use:   "prestop",
		Short: "Kubernetes preStop hook: start the drain and return when the propagation window has ended",
		Long: `prestop calls POST http://ADMIN/drain?wait=propagation on the service's admin listener
and returns when the propagation window has ended, so that Kubernetes sends SIGTERM only
after consumers have stopped routing to the pod. Use it as the preStop exec command in
images without a shell:

  lifecycle:
    preStop:
      exec:
        command: ["/drainkit", "prestop"]

The admin address comes from --admin-addr, else from DRAINKIT_ADMIN_ADDR (the variable
the service itself reads; a hook's exec runs with the container's environment), else
127.0.0.1:8081; an empty or wildcard host (":8081", "0.0.0.0:8081", "[::]:8081") means
127.0.0.1, so that the call comes from a loopback peer. It exits non-zero with a message
naming the address when the admin listener cannot be reached within --connect-timeout,
or when the service refuses the request. The token (if the admin listener requires one)
comes from --token or DRAINKIT_ADMIN_TOKEN.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.token == "" {
				o.token = os.Getenv("DRAINKIT_ADMIN_TOKEN")
			}
			if o.adminAddr == "" {
				o.adminAddr = os.Getenv(envAdminAddr)
			}
			if o.adminAddr == "" {
				o.adminAddr = defaultPrestopAddr
			}
			took, err := prestop(cmd.Context(), o)
			if err != nil {
				return &exitError{code: 1, msg: "prestop: " + err.Error()}
			}
			addr, _ := dialAddr(o.adminAddr) // prestop checked it
			fmt.Fprintf(stdout, "drainkit prestop: propagation window ended after %s (admin listener %s)\n", took.Round(time.Millisecond), addr)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.adminAddr, "admin-addr", "", "the service's admin listener, host:port (default $"+envAdminAddr+", else "+defaultPrestopAddr+"; an empty or wildcard host means 127.0.0.1)")
	f.StringVar(&o.token, "token", "", "bearer token for POST /drain (default $DRAINKIT_ADMIN_TOKEN); prefer the variable: flags show in the process list")
	f.DurationVar(&o.connectTimeout, "connect-timeout", 2*time.Second, "give up when the admin listener does not accept a connection within this")
	f.DurationVar(&o.timeout, "timeout", 0, "give up waiting for the window after this; 0: wait (the kubelet's grace period bounds the hook)")
	return cmd
}

// envAdminAddr is the service's admin.addr variable, which prestop reads too.
var envAdminAddr = config.EnvVar("admin.addr")

// defaultPrestopAddr is the admin address without --admin-addr and
// DRAINKIT_ADMIN_ADDR: the example service's.
const defaultPrestopAddr = "127.0.0.1:8081"

// dialAddr turns an admin listener address into the one prestop dials: an
// empty or unspecified host (the service listening on every interface)
// becomes 127.0.0.1, so that the call comes from a loopback peer.
func dialAddr(adminAddr string) (string, error) {
	host, port, err := net.SplitHostPort(adminAddr)
	if err != nil {
		return "", err
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// prestop starts the drain and waits for the end of the propagation window.
// It returns how long the call took.
func prestop(ctx context.Context, o prestopOptions) (time.Duration, error) {
	addr, err := dialAddr(o.adminAddr)
	if err != nil {
		return 0, fmt.Errorf("admin address %q (--admin-addr or %s): want host:port, e.g. 127.0.0.1:8081: %w", o.adminAddr, envAdminAddr, err)
	}
	if o.connectTimeout <= 0 {
		return 0, fmt.Errorf("--connect-timeout %s: must be > 0", o.connectTimeout)
	}
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	tr := &http.Transport{
		Proxy:             nil,
		DialContext:       (&net.Dialer{Timeout: o.connectTimeout}).DialContext,
		DisableKeepAlives: true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/drain?wait=propagation&reason=preStop", nil)
	if err != nil {
		return 0, err
	}
	if o.token != "" {
		req.Header.Set("Authorization", "Bearer "+o.token)
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		var ne net.Error
		var op *net.OpError
		switch {
		case errors.As(err, &op) && op.Op == "dial":
			return 0, fmt.Errorf("admin listener at %s is unreachable (is the service running, with its admin listener on this address?): %w", addr, op)
		case errors.As(err, &ne) && ne.Timeout():
			return 0, fmt.Errorf("admin listener at %s: gave up after %s (--timeout): %w", addr, time.Since(start).Round(time.Millisecond), unwrapURL(err))
		}
		return 0, fmt.Errorf("admin listener at %s: %w", addr, unwrapURL(err))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	took := time.Since(start)
	switch {
	case resp.StatusCode == http.StatusOK:
		return took, nil
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return 0, fmt.Errorf("admin listener at %s refused POST /drain (%s): set the admin token with DRAINKIT_ADMIN_TOKEN or --token, or call from loopback: %s",
			addr, resp.Status, strings.TrimSpace(string(body)))
	default:
		return 0, fmt.Errorf("admin listener at %s answered POST /drain?wait=propagation with %s: %s", addr, resp.Status, strings.TrimSpace(string(body)))
	}
}

// unwrapURL drops net/http's *url.Error wrapper, which repeats the URL.
func unwrapURL(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}
