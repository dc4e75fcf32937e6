// Package prestop is the Kubernetes preStop hook's client, shared by
// `drainkit prestop` (the CLI) and `<service> prestop` (any binary built on
// drainkit.Main): it calls POST /drain?wait=propagation on the service's
// admin listener over loopback and returns when the propagation window has
// ended (DESIGN.md section 2), so that the kubelet sends SIGTERM only after
// consumers have stopped routing to the pod.
package prestop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// DefaultAddr is the admin address used when neither a flag nor a setting
// names one: the default admin listener's port on loopback.
const DefaultAddr = "127.0.0.1:8081"

// DefaultConnectTimeout is the default bound on connecting to the admin
// listener.
const DefaultConnectTimeout = 2 * time.Second

// Options configure Call.
type Options struct {
	// AdminAddr is the service's admin listener, host:port; an empty or
	// unspecified host (":8081", "0.0.0.0:8081", "[::]:8081") means
	// 127.0.0.1, so that the call comes from a loopback peer (see DialAddr).
	AdminAddr string
	// AddrSource names where AdminAddr came from, for errors (e.g.
	// "--admin-addr or DRAINKIT_ADMIN_ADDR").
	AddrSource string
	// Token is the admin bearer token; empty sends none.
	Token string
	// ConnectTimeout bounds the connect to the admin listener; it must be
	// > 0.
	ConnectTimeout time.Duration
	// Timeout bounds the whole call; 0 waits for the window (the kubelet's
	// grace period bounds the hook).
	Timeout time.Duration
}

// DialAddr turns an admin listener address into the one the hook dials: an
// empty or unspecified host (the service listening on every interface)
// becomes 127.0.0.1.
func DialAddr(adminAddr string) (string, error) {
	host, port, err := net.SplitHostPort(adminAddr)
	if err != nil {
		return "", err
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Call starts the drain (reason "preStop") and waits for the end of the
// propagation window. It returns the address it dialled and how long the
// call took. Errors name the address: unreachable within ConnectTimeout,
// the Timeout reached, or the service refusing the request (401/403: a
// token is needed, or the caller is not on loopback).
func Call(ctx context.Context, o Options) (addr string, took time.Duration, err error) {
	addr, err = DialAddr(o.AdminAddr)
	if err != nil {
		return "", 0, fmt.Errorf("admin address %q (%s): want host:port, e.g. 127.0.0.1:8081: %w", o.AdminAddr, o.AddrSource, err)
	}
	if o.ConnectTimeout <= 0 {
		return addr, 0, fmt.Errorf("--connect-timeout %s: must be > 0", o.ConnectTimeout)
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	tr := &http.Transport{
		Proxy:             nil,
		DialContext:       (&net.Dialer{Timeout: o.ConnectTimeout}).DialContext,
		DisableKeepAlives: true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/drain?wait=propagation&reason=preStop", nil)
	if err != nil {
		return addr, 0, err
	}
	if o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+o.Token)
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		var ne net.Error
		var op *net.OpError
		switch {
		case errors.As(err, &op) && op.Op == "dial":
			return addr, 0, fmt.Errorf("admin listener at %s is unreachable (is the service running, with its admin listener on this address?): %w", addr, op)
		case errors.As(err, &ne) && ne.Timeout():
			return addr, 0, fmt.Errorf("admin listener at %s: gave up after %s (--timeout): %w", addr, time.Since(start).Round(time.Millisecond), unwrapURL(err))
		}
		return addr, 0, fmt.Errorf("admin listener at %s: %w", addr, unwrapURL(err))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	took = time.Since(start)
	switch {
	case resp.StatusCode == http.StatusOK:
		return addr, took, nil
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return addr, 0, fmt.Errorf("admin listener at %s refused POST /drain (%s): set the admin token with DRAINKIT_ADMIN_TOKEN or --token, or call from loopback: %s",
			addr, resp.Status, strings.TrimSpace(string(body)))
	default:
		return addr, 0, fmt.Errorf("admin listener at %s answered POST /drain?wait=propagation with %s: %s", addr, resp.Status, strings.TrimSpace(string(body)))
	}
}

// Done is the line both commands print when the window has ended.
func Done(program string, addr string, took time.Duration) string {
	return fmt.Sprintf("%s prestop: propagation window ended after %s (admin listener %s)\n", program, took.Round(time.Millisecond), addr)
}

// unwrapURL drops net/http's *url.Error wrapper, which repeats the URL.
func unwrapURL(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}

// BindFlags defines the hook's flags on fs: --admin-addr (addrHelp says
// where its default comes from), --token, --connect-timeout and --timeout.
func BindFlags(fs *pflag.FlagSet, o *Options, addrHelp string) {
	fs.StringVar(&o.AdminAddr, "admin-addr", "", "the service's admin listener, host:port ("+addrHelp+"; an empty or wildcard host means 127.0.0.1)")
	fs.StringVar(&o.Token, "token", "", "bearer token for POST /drain (default $DRAINKIT_ADMIN_TOKEN); prefer the variable: flags show in the process list")
	fs.DurationVar(&o.ConnectTimeout, "connect-timeout", DefaultConnectTimeout, "give up when the admin listener does not accept a connection within this")
	fs.DurationVar(&o.Timeout, "timeout", 0, "give up waiting for the window after this; 0: wait (the kubelet's grace period bounds the hook)")
}
