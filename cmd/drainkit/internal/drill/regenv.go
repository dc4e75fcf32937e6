package drill

import (
	"slices"
	"strings"

	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/registry/etcd"
)

// Legacy variables that drainkit's examples and serve mode read, beside the
// config package's keys: consul/api reads CONSUL_HTTP_ADDR itself, and
// ETCD_ENDPOINTS names etcd when registry.etcd.endpoints is empty.
const (
	envConsulAddr    = "CONSUL_HTTP_ADDR"
	envEtcdEndpoints = "ETCD_ENDPOINTS"
	// envNacosAddr is registry/nacos's server variable (nacos.EnvServerAddr).
	envNacosAddr = "NACOS_SERVER_ADDR"
)

// registryEnv returns the variables that point a replica at the drill's
// registry, as every drainkit program reads them: the config package's keys
// (DRAINKIT_REGISTRY_SERVICE, DRAINKIT_REGISTRY_ETCD_ENDPOINTS and
// DRAINKIT_REGISTRY_ETCD_PREFIX, the prefix the drill watches) and the
// legacy variables above. Each other registry's selector is set empty, so
// that a replica registers where the drill looks and nowhere else even when
// the drill's own environment names another registry. nil without a
// registry: the replicas then keep the drill's environment as it is.
func (c Config) registryEnv(service string) []string {
	endpoints, prefix := config.EnvVar("registry.etcd.endpoints"), config.EnvVar("registry.etcd.prefix")
	nacosAddr := config.EnvVar("registry.nacos.server_addr")
	switch {
	case c.Etcd != "":
		return []string{config.EnvVar("registry.service") + "=" + service,
			endpoints + "=" + c.Etcd, envEtcdEndpoints + "=" + c.Etcd, prefix + "=" + c.etcdPrefix(), envConsulAddr + "=",
			nacosAddr + "=", envNacosAddr + "="}
	case c.Consul != "":
		return []string{config.EnvVar("registry.service") + "=" + service,
			envConsulAddr + "=" + c.Consul, endpoints + "=", envEtcdEndpoints + "=", nacosAddr + "=", envNacosAddr + "="}
	case c.Nacos != "":
		// The replicas register in the namespace, group and cluster the
		// drill's consumers and operator address: registry/nacos's
		// defaults (an empty variable counts as unset).
		env := []string{config.EnvVar("registry.service") + "=" + service,
			nacosAddr + "=" + c.Nacos, envNacosAddr + "=" + c.Nacos, envConsulAddr + "=", endpoints + "=", envEtcdEndpoints + "="}
		for _, k := range []string{"namespace", "group", "cluster", "context_path"} {
			env = append(env, config.EnvVar("registry.nacos."+k)+"=")
		}
		return env
	}
	return nil
}

// etcdPrefix is the key prefix the drill watches and its replicas register
// under: Config.EtcdPrefix, else etcd.DefaultPrefix.
func (c Config) etcdPrefix() string {
	if c.EtcdPrefix != "" {
		return c.EtcdPrefix
	}
	return etcd.DefaultPrefix
}

// describeRegistryEnv lists the registry variables in env (the last value
// of each, as the process sees it: DRAINKIT_REGISTRY_*, CONSUL_* and ETCD_*),
// sorted, for an error saying what a replica was told; the values of
// secrets (tokens, passwords, credentials) are not shown.
func describeRegistryEnv(env []string) string {
	last := map[string]string{}
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "DRAINKIT_REGISTRY_") || strings.HasPrefix(name, "CONSUL_") || strings.HasPrefix(name, "ETCD_") || strings.HasPrefix(name, "NACOS_") {
			last[name] = value
		}
	}
	var out []string
	for name, value := range last {
		switch {
		case isSecretEnv(name) && value != "":
			value = "(set, not shown)"
		case value == "":
			value = `""`
		}
		out = append(out, name+"="+value)
	}
	slices.Sort(out)
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, " ")
}

// isSecretEnv reports whether a variable's value is a credential:
// CONSUL_HTTP_TOKEN, CONSUL_HTTP_AUTH, DRAINKIT_REGISTRY_ETCD_PASSWORD and the
// like.
func isSecretEnv(name string) bool {
	for _, s := range []string{"TOKEN", "PASSWORD", "AUTH", "SECRET", "KEY"} {
		if strings.Contains(name, s) {
			return true
		}
	}
	return false
}
