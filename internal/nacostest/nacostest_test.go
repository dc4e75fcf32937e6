package nacostest

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// status answers GET path?q's status code (with token as accessToken, if
// set).
func status(t *testing.T, s *Server, path string, q url.Values, token string) int {
	t.Helper()
	if token != "" {
		q = url.Values{"accessToken": {token}, "serviceName": q["serviceName"]}
	}
	resp, err := apiClient.Get(s.BaseURL + path + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestAuthModes: a server with Nacos's shipped defaults answers the client
// API to anyone and the admin API only with an admin's token; the FullAuth
// variant wants a token on the client API too, and its client user may
// read the public namespace.
func TestAuthModes(t *testing.T) {
	list := url.Values{"serviceName": {"nacostest-auth"}}
	for _, mode := range []Auth{FullAuth, ShippedAuth} {
		t.Run(mode.String(), func(t *testing.T) {
			s := StartWith(t, Options{Auth: mode})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			admin, err := s.AdminToken(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if code := status(t, s, "/v3/admin/ns/instance/list", list, ""); code != http.StatusForbidden {
				t.Errorf("admin API without a token: %d, want 403", code)
			}
			// 404: Nacos's answer for a service without instances.
			if code := status(t, s, "/v3/admin/ns/instance/list", list, admin); code != http.StatusNotFound {
				t.Errorf("admin API with the admin's token: %d, want 404 (no such service)", code)
			}
			anonymous := status(t, s, "/v1/ns/instance/list", list, "")
			switch mode {
			case ShippedAuth:
				if anonymous != http.StatusOK {
					t.Errorf("client API without a token: %d, want 200", anonymous)
				}
				if s.User != "" || s.Password != "" {
					t.Errorf("client credentials %q on a server with the shipped defaults", s.User)
				}
			case FullAuth:
				if anonymous != http.StatusForbidden {
					t.Errorf("client API without a token: %d, want 403", anonymous)
				}
				tok, err := s.Login(ctx, s.User, s.Password)
				if err != nil {
					t.Fatal(err)
				}
				if code := status(t, s, "/v1/ns/instance/list", list, tok); code != http.StatusOK {
					t.Errorf("client API with the client user's token: %d, want 200", code)
				}
			}
		})
	}
}
