package consul

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/hashicorp/consul/api"
)

// SettingError is a consul/api setting that can only fail later, reported at
// New (or Options.Validate) instead: a CONSUL_HTTP_ADDR that is no address, a
// CA, certificate, key or token file that cannot be read.
type SettingError struct {
	// Setting names the setting: the environment variable (CONSUL_CACERT)
	// when the value came from the environment, else the api.Config field
	// (Options.Consul.TLSConfig.CAFile).
	Setting string
	// FromEnv is true when the value came from the environment variable.
	FromEnv bool
	// Value is the offending value (a path or an address, never a token).
	Value string
	// Problem says what is wrong.
	Problem string
}

func (e *SettingError) Error() string {
	from := "setting"
	if e.FromEnv {
		from = "environment variable"
	}
	return fmt.Sprintf("consul: %s %s=%q: %s", from, e.Setting, e.Value, e.Problem)
}

// checkSettings checks the agent address and the files named by cfg (nil
// means api.DefaultConfig()), after filling empty fields from the
// environment as api.NewClient does. It returns a *SettingError or nil.
func checkSettings(cfg *api.Config) error {
	env := api.DefaultConfig()
	given := env
	if cfg != nil {
		given = cfg
	}
	pick := func(v, envName, envVal, field string) (string, string, bool) {
		if v == "" {
			v = envVal
		}
		fromEnv := v != "" && v == os.Getenv(envName)
		if fromEnv {
			return v, envName, true
		}
		return v, "Options.Consul." + field, false
	}
	addr, name, fromEnv := pick(given.Address, api.HTTPAddrEnvName, env.Address, "Address")
	if problem := addressProblem(addr); problem != "" {
		return &SettingError{Setting: name, FromEnv: fromEnv, Value: addr, Problem: problem}
	}
	files := []struct{ v, envName, envVal, field, what string }{
		{given.TLSConfig.CAFile, api.HTTPCAFile, env.TLSConfig.CAFile, "TLSConfig.CAFile", "CA certificate file"},
		{given.TLSConfig.CAPath, api.HTTPCAPath, env.TLSConfig.CAPath, "TLSConfig.CAPath", "CA certificate directory"},
		{given.TLSConfig.CertFile, api.HTTPClientCert, env.TLSConfig.CertFile, "TLSConfig.CertFile", "client certificate file"},
		{given.TLSConfig.KeyFile, api.HTTPClientKey, env.TLSConfig.KeyFile, "TLSConfig.KeyFile", "client key file"},
		{given.TokenFile, api.HTTPTokenFileEnvName, env.TokenFile, "TokenFile", "ACL token file"},
	}
	for _, f := range files {
		path, name, fromEnv := pick(f.v, f.envName, f.envVal, f.field)
		if path == "" {
			continue
		}
		file, err := os.Open(path)
		if err != nil {
			return &SettingError{Setting: name, FromEnv: fromEnv, Value: path, Problem: "cannot read the " + f.what + ": " + err.Error()}
		}
		file.Close()
	}
	return nil
}

// addressProblem says what is wrong with a Consul agent address as
// api.NewClient takes it ("host:port", "http://host:port[/prefix]",
// "https://...", "unix:///path"), or "" if nothing is.
func addressProblem(addr string) string {
	const allowed = "want host:port, http://host:port, https://host:port or unix:///path"
	scheme, rest, found := strings.Cut(addr, "://")
	if !found {
		scheme, rest = "http", addr
	}
	switch scheme {
	case "unix":
		if rest == "" {
			return "empty socket path; " + allowed
		}
		return ""
	case "http", "https":
	default:
		return "unknown scheme " + strconv.Quote(scheme) + "; " + allowed
	}
	u, err := url.Parse(scheme + "://" + rest)
	if err != nil {
		return "not an address: " + err.Error() + "; " + allowed
	}
	host := u.Hostname()
	if host == "" || (strings.Contains(host, ":") && net.ParseIP(host) == nil) {
		return "no valid host; " + allowed
	}
	return ""
}
