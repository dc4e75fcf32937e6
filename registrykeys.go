package drainkit

import (
	"fmt"
	"strings"

	"github.com/drainkit/drainkit/config"
)

// registryPrefix marks the settings that belong to registrars: they exist
// (as flags, and as values Main accepts) only when a wired Registration
// lists them in Keys.
const registryPrefix = "registry."

// wiredKeys returns the registry.* keys the wired registrations read.
func (s *service) wiredKeys() map[string]bool {
	out := map[string]bool{}
	for _, r := range s.registrations {
		for _, k := range r.r.Keys {
			out[k] = true
		}
	}
	return out
}

// unwiredKey reports whether key is a registry setting no wired registrar
// reads: its flag is not defined.
func (s *service) unwiredKey(wired map[string]bool) func(key string) bool {
	return func(key string) bool { return strings.HasPrefix(key, registryPrefix) && !wired[key] }
}

// checkRegistrySettings fails for a registry setting that was given (file,
// environment) although no wired registrar reads it: a program that wires
// no registrar, or a Consul setting given to a program wiring only etcd.
func (s *service) checkRegistrySettings(cfg *config.Config) error {
	wired := s.wiredKeys()
	unwired := s.unwiredKey(wired)
	for _, k := range config.Keys() {
		if src := cfg.Source(k); unwired(k) && src.Kind != config.FromDefault {
			return fmt.Errorf("%s (from %s) is set, but %s: unset it, or wire a registrar that reads it (registry/consul.Register, registry/etcd.Register)",
				k, src, s.registrarsDescription(wired))
		}
	}
	return nil
}

// registrarsDescription says which registrars are wired, for errors.
func (s *service) registrarsDescription(wired map[string]bool) string {
	if len(s.registrations) == 0 {
		return "this program wires no registrar"
	}
	var names []string
	for _, r := range s.registrations {
		names = append(names, r.name)
	}
	return "no registrar this program wires (" + strings.Join(names, ", ") + ") reads it"
}
