package etcd_test

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/internal/testcert"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/registry/etcd"
)

// TestOptionsFromTLSAndAuth: TLS files and credentials land in the etcd
// client's own configuration; an unreadable file fails naming the key; no
// endpoints fails naming registry.etcd.endpoints.
func TestOptionsFromTLSAndAuth(t *testing.T) {
	cert, _ := testcert.SelfSigned(t)
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	reg := config.Default().Registry
	reg.Etcd.Endpoints = "https://127.0.0.1:2379"
	reg.Etcd.Username, reg.Etcd.Password = "svc", "pw"
	reg.Etcd.CAFile = write("ca.pem", "CERTIFICATE", cert.Certificate[0])
	reg.Etcd.CertFile = write("cert.pem", "CERTIFICATE", cert.Certificate[0])
	reg.Etcd.KeyFile = write("key.pem", "PRIVATE KEY", key)
	o, err := etcd.OptionsFrom(reg, "svc", 8080)
	if err != nil {
		t.Fatal(err)
	}
	if o.Client.TLS == nil || o.Client.TLS.RootCAs == nil || o.Client.TLS.GetClientCertificate == nil || o.Client.Username != "svc" || o.Client.Password != "pw" {
		t.Fatalf("client config: TLS %v, user %q", o.Client.TLS, o.Client.Username)
	}

	reg.Etcd.CAFile = filepath.Join(dir, "missing.pem")
	var re *budget.RangeError
	if _, err := etcd.OptionsFrom(reg, "svc", 8080); !errors.As(err, &re) || re.Key != "registry.etcd.ca_file" {
		t.Fatalf("missing CA file: %v", err)
	}
	reg = config.Default().Registry
	if _, err := etcd.OptionsFrom(reg, "svc", 8080); !errors.As(err, &re) || re.Key != "registry.etcd.endpoints" {
		t.Fatalf("no endpoints: %v", err)
	}
}
