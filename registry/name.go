package registry

// ValidServiceName reports whether name is a service name drainkit accepts:
// 1 to 255 bytes of ASCII letters, digits, '-', '_' and '.', usable in Consul
// DNS and as an etcd key segment. It is the one rule behind config's
// registry.service, registry/consul's and registry/etcd's Options.Validate.
func ValidServiceName(name string) bool {
	if name == "" || len(name) > 255 {
		return false
	}
	for _, ch := range name {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_' || ch == '.') {
			return false
		}
	}
	return true
}
