package drainkit

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/drainkit/drainkit/config"
)

// adminName is the admin listener's name in the start line and in the
// addresses given to Registration.Build.
const adminName = "admin"

// parseFlags defines and parses the flags: config's (--config, --admin-addr,
// one per key), --<name>-addr per listener and --version. It returns the
// flag values of the listener addresses by listener name.
func (s *service) parseFlags(args []string) (*pflag.FlagSet, map[string]*string, error) {
	fs := pflag.NewFlagSet(s.name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported in one line
	addrs := map[string]*string{}
	for _, l := range s.listeners {
		if !validListenerName(l.name) || l.name == adminName || addrs[l.name] != nil {
			return nil, nil, fmt.Errorf("listener name %q: want a unique name of letters, digits, '-' and '_' other than %q (its flag is --<name>-addr)", l.name, adminName)
		}
		addrs[l.name] = fs.String(l.name+"-addr", l.addr, "listener "+l.name+", host:port (port 0 picks a free port)")
	}
	version := fs.Bool("version", false, "print the version and exit")
	if err := defineFlags(fs, s.defineFlags, s.unwiredKey(s.wiredKeys())); err != nil {
		return nil, nil, err
	}
	if f := fs.Lookup(config.FlagName("admin.addr")); f != nil && s.defaultAdmin != "" {
		f.DefValue = s.defaultAdmin
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(s.stdout, "Usage: %s [flags]\n       %s %s [flags]   the Kubernetes preStop hook (see %[1]s %[3]s --help)\n\n", s.name, s.name, PrestopCommand)
			fs.SetOutput(s.stdout)
			fs.PrintDefaults()
			return nil, nil, errDone
		}
		return nil, nil, fmt.Errorf("%w%s (see --help)", err, didYouMean(fs, err))
	}
	if *version {
		fmt.Fprintf(s.stdout, "%s %s (drainkit %s)\n", s.name, mainVersion(), Version())
		return nil, nil, errDone
	}
	if fs.NArg() > 0 {
		return nil, nil, fmt.Errorf("unexpected argument %q (see --help)", fs.Arg(0))
	}
	return fs, addrs, nil
}

// didYouMean returns "; did you mean --<flag>?" for pflag's error about an
// unknown flag close to a defined one (config.Closest, as for a file's key
// or a variable), else "".
func didYouMean(fs *pflag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return ""
	}
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	if s := config.Closest(name, names, config.MaxKeyDistance); s != "" {
		return "; did you mean --" + s + "?"
	}
	return ""
}

// defineFlags runs the WithFlags functions, then binds config's flags but
// those omit reports (the registry settings no registrar reads). A
// flag defined twice (pflag panics) becomes an error naming it.
func defineFlags(fs *pflag.FlagSet, defines []func(*pflag.FlagSet), omit func(key string) bool) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("WithFlags: %v (the entry point defines --version, --config, --<name>-addr and one flag per setting)", p)
		}
	}()
	for _, define := range defines {
		define(fs)
	}
	config.BindFlagsExcept(fs, omit)
	return nil
}

// validListenerName reports whether name is non-empty and made of ASCII
// letters, digits, '-' and '_', so that --<name>-addr is a usable flag.
func validListenerName(name string) bool {
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return name != ""
}

// listenAddrs checks every listener address and returns them by name, the
// admin listener's included.
func (s *service) listenAddrs(cfg *config.Config, flags map[string]*string) (map[string]string, error) {
	out := map[string]string{}
	for _, l := range s.listeners {
		a := *flags[l.name]
		if err := checkAddr(a); err != nil {
			return nil, fmt.Errorf("--%s-addr: %q %v (want host:port, e.g. 127.0.0.1:8080)", l.name, a, err)
		}
		out[l.name] = a
	}
	return out, nil
}

func checkAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("is not host:port")
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return errors.New("has no numeric port 0..65535")
	}
	return nil
}

// listen opens the admin listener first (its probes answer 503 during
// warm-up), then the service listeners; on failure it closes what it opened.
// adminSrc says where admin.addr came from, for the error.
func (s *service) listen(adminAddr string, adminSrc config.Source, addrs map[string]string) (map[string]net.Listener, error) {
	lns := map[string]net.Listener{}
	ln, err := net.Listen("tcp", adminAddr)
	if err != nil {
		return nil, fmt.Errorf("admin.addr (from %s): %w", adminSrc, err)
	}
	lns[adminName] = ln
	for _, l := range s.listeners {
		ln, err := net.Listen("tcp", addrs[l.name])
		if err != nil {
			closeAll(lns)
			return nil, fmt.Errorf("--%s-addr: %w", l.name, err)
		}
		lns[l.name] = ln
	}
	return lns, nil
}

func closeAll(lns map[string]net.Listener) {
	for _, ln := range lns {
		_ = ln.Close()
	}
}
