package httpdrain_test

import (
	"bufio"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
)

// The subset of WebSocket (RFC 6455) that the hijack tests speak: the
// opening handshake, and single-frame messages of at most 125 bytes, masked
// from the client. The standard library has no WebSocket; what the tests
// check is the drain of a hijacked connection, not the protocol.

const (
	wsText  = 0x1
	wsClose = 0x8
	wsGUID  = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11" // RFC 6455 section 1.3
)

// wsAccept is the Sec-WebSocket-Accept answer to key.
func wsAccept(key string) string {
	h := sha1.Sum([]byte(key + wsGUID))
	return base64.StdEncoding.EncodeToString(h[:])
}

// wsUpgrade answers a WebSocket handshake: it hijacks the connection and
// writes the 101 response.
func wsUpgrade(w http.ResponseWriter, r *http.Request) (net.Conn, *bufio.ReadWriter, error) {
	key := r.Header.Get("Sec-WebSocket-Key")
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") || key == "" {
		http.Error(w, "not a WebSocket handshake", http.StatusBadRequest)
		return nil, nil, errors.New("not a WebSocket handshake")
	}
	c, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(brw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n", wsAccept(key))
	if err := brw.Flush(); err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, brw, nil
}

// wsDial opens a WebSocket to path on addr.
func wsDial(addr, path string) (net.Conn, *bufio.Reader, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	key := base64.StdEncoding.EncodeToString(nonce[:])
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", path, addr, key)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err == nil && (resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") != wsAccept(key)) {
		err = fmt.Errorf("handshake answered %s, accept %q", resp.Status, resp.Header.Get("Sec-WebSocket-Accept"))
	}
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, br, nil
}

// wsWrite writes one final frame of opcode op; a client masks its frames.
func wsWrite(w io.Writer, op byte, payload []byte, mask bool) error {
	if len(payload) > 125 {
		return fmt.Errorf("payload of %d bytes: the test frames carry at most 125", len(payload))
	}
	b := []byte{0x80 | op, byte(len(payload))}
	if !mask {
		_, err := w.Write(append(b, payload...))
		return err
	}
	var key [4]byte
	_, _ = rand.Read(key[:])
	b[1] |= 0x80
	b = append(b, key[:]...)
	for i, p := range payload {
		b = append(b, p^key[i%4])
	}
	_, err := w.Write(b)
	return err
}

// wsRead reads one frame of at most 125 bytes, unmasked.
func wsRead(r io.Reader) (op byte, payload []byte, err error) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := int(h[1] & 0x7f)
	if n > 125 {
		return 0, nil, fmt.Errorf("frame of length code %d: the test frames carry at most 125 bytes", n)
	}
	var key [4]byte
	masked := h[1]&0x80 != 0
	if masked {
		if _, err := io.ReadFull(r, key[:]); err != nil {
			return 0, nil, err
		}
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, nil, err
	}
	if masked {
		for i := range payload {
			payload[i] ^= key[i%4]
		}
	}
	return h[0] & 0x0f, payload, nil
}
