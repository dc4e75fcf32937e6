package config

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/registry"
)

// Validate checks every value of c against its range, the window's order and
// the grace-period budget, and returns an *Error for the problem, several of
// them on one line when more than one key is out of range (errors.As finds
// the first, in the order of Keys), or nil. Load calls it; call it after changing a Config
// in code.
func (c *Config) Validate() error {
	if err := c.validate(nil); err != nil {
		return err
	}
	return nil
}

// CheckDeregisterBudget checks registry.deregister_timeout against the
// grace-period budget for an instance that registers somewhere
// (budget.Timings.CheckDeregisterBudget: with no propagation window,
// deregistration must fit grace_period with drain.timeout and stop.timeout).
// Validate cannot, since it does not know whether a registrar will be built;
// drainkit.Main calls this before any listener opens when one will be. It
// returns an *Error naming the key, its value and source, and the allowed
// range, or nil.
func (c *Config) CheckDeregisterBudget() error {
	err := c.Timings.CheckDeregisterBudget(c.Registry.DeregisterTimeout)
	var re *budget.RangeError
	if !errors.As(err, &re) {
		return err
	}
	k, _ := lookupKey(re.Key)
	return c.rangeError(k, nil, re.Allowed, re)
}

// validate is Validate with the values as the sources spelled them, for the
// error message; keys missing from given are shown formatted. It reports
// every key out of range (an *Error, or keyErrors of several), not only the
// first.
func (c *Config) validate(given map[string]string) error {
	var errs []error
	wrap := func(err error, group string) {
		var found bool
		budget.EachRangeError(err, func(re *budget.RangeError) {
			found = true
			k, ok := lookupKey(re.Key)
			if !ok {
				errs = append(errs, &Error{Key: re.Key, Value: quoteValue(re.Value), Problem: "is out of range", Allowed: re.Allowed, Err: re})
				return
			}
			errs = append(errs, c.rangeError(k, given, re.Allowed, re))
		})
		if err != nil && !found {
			errs = append(errs, &Error{Key: group, Problem: err.Error(), Err: err})
		}
	}
	wrap(c.Timings.Validate(), "timings")
	wrap(c.Checks.Validate(), "checks")
	for _, k := range keys {
		if msg := c.checkOwn(k); msg != "" {
			errs = append(errs, c.rangeError(k, given, msg, nil))
		}
	}
	return joinErrors(errs)
}

// rangeError builds the Error for key k out of range; allowed is the rule it
// broke. Other keys the rule mentions are listed with their sources when they
// were set explicitly, so a budget overflow caused by propagation.max from
// the environment says so.
func (c *Config) rangeError(k keyDef, given map[string]string, allowed string, err error) *Error {
	val, ok := given[k.name]
	if !ok {
		val = quoteValue(k.format(c))
		if k.kind == kindSecret {
			val = "[redacted]"
		}
	}
	var related []string
	for _, o := range keys {
		if o.name == k.name || !strings.Contains(allowed, o.name) {
			continue
		}
		if src := c.Source(o.name); src.Kind != FromDefault {
			related = append(related, o.name+" "+o.format(c)+" from "+src.String())
		}
	}
	if len(related) > 0 {
		allowed += "; " + strings.Join(related, ", ")
	}
	problem := "is out of range"
	if k.kind == kindString || k.kind == kindSecret || k.kind == kindMeta {
		problem = "is not valid"
	}
	return &Error{Key: k.name, Value: val, Source: c.Source(k.name), Problem: problem, Allowed: allowed, Err: err}
}

// checkOwn checks the keys lifecycle does not validate and returns the rule
// broken, or "".
func (c *Config) checkOwn(k keyDef) string {
	if strings.HasPrefix(k.name, "registry.etcd.") {
		return c.checkEtcd(k)
	}
	if strings.HasPrefix(k.name, "registry.nacos.") {
		return c.checkNacos(k)
	}
	r := c.Registry
	max := "<= " + formatDuration(budget.MaxDuration)
	switch k.name {
	case "admin.addr":
		return checkAddr(c.Admin.Addr)
	case "admin.token":
		for _, ch := range string(c.Admin.Token) {
			if ch <= ' ' || ch > '~' || ch == '"' || ch == '\\' {
				return "must be printable ASCII without spaces, quotes or backslashes"
			}
		}
	case "registry.service":
		if r.Service != "" && !registry.ValidServiceName(r.Service) { // "": the program's default
			return "must be 1 to 255 letters, digits, '-', '_' and '.'"
		}
	case "registry.address":
		if r.Address != "" && net.ParseIP(r.Address) == nil && !validHostName(r.Address) {
			return "must be empty, an IP address or a DNS name (letters, digits, '-' and '.')"
		}
	case "registry.ttl":
		if r.TTL < time.Second || r.TTL > budget.MaxDuration {
			return "must be >= 1s and " + max
		}
	case "registry.heartbeat_interval":
		if r.HeartbeatInterval < 0 || r.HeartbeatInterval > r.TTL/3 {
			return "must be 0 (registry.ttl / 3) or > 0s and <= registry.ttl / 3 (" + formatDuration(r.TTL/3) + ")"
		}
	case "registry.deregister_critical_service_after":
		if r.DeregisterCriticalServiceAfter < time.Minute || r.DeregisterCriticalServiceAfter > budget.MaxDuration {
			return "must be >= 1m (Consul's minimum) and " + max
		}
	case "registry.call_timeout":
		hb := r.HeartbeatInterval
		if hb == 0 {
			hb = r.TTL / 3
		}
		if r.CallTimeout < 0 || r.CallTimeout > hb {
			return "must be 0 (the smaller of the heartbeat interval and 2s) or > 0s and <= registry.heartbeat_interval (" + formatDuration(hb) + ")"
		}
	case "registry.meta":
		return checkMeta(r.Meta)
	case "registry.deregister_timeout":
		if r.DeregisterTimeout <= 0 || r.DeregisterTimeout > budget.MaxDuration {
			return "must be > 0s and " + max
		}
	}
	return ""
}

// checkAddr accepts host:port with a numeric port 0..65535.
func checkAddr(addr string) string {
	const rule = "must be host:port with a numeric port 0..65535, e.g. :8081 or 127.0.0.1:8081"
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return rule
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return rule
	}
	return ""
}

// validHostName accepts a DNS name: dot-separated labels of 1 to 63 ASCII
// letters, digits and '-', not starting or ending with '-', 253 bytes at most.
func validHostName(h string) bool {
	if len(h) > 253 {
		return false
	}
	for _, l := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
