package drill

import "testing"

// The Spring consumer's reasons for a request without an answer sort into
// the drill's failure kinds as the Go consumers' errors do.
func TestSpringErrorKinds(t *testing.T) {
	for why, want := range map[string]Outcome{
		"refused: java.net.ConnectException":            Refused,
		"reset: Connection reset":                       Reset,
		"eof: HTTP/1.1 header parser received no bytes": EOF,
		"timeout: request timed out":                    Timeout,
		"no-instance: No instances available for svc":   NoEndpoint,
		"other: IOException: something else":            Other,
	} {
		err := springError(why)
		if got := Classify(0, err); got != want {
			t.Errorf("%q: %v, want %v", why, got, want)
		}
		if err.Error() != "spring consumer: "+why {
			t.Errorf("%q: error %q", why, err)
		}
	}
}
