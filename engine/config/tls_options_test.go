package config

import (
	"crypto/tls"
	"reflect"
	"strings"
	"testing"
)

// TestConfigNonTLSOptions: the options left for the transport and the
// protocol are all but the six TLS ones, in a new map.
func TestConfigNonTLSOptions(t *testing.T) {
	opts := map[string]string{"transport.needClientAuth": "true", "wantClientAuth": "false", "wireFormat.maxFrameSize": "1048576",
		"transport.enabledProtocols": "TLSv1.2", "transport.enabledCipherSuites": "TLS_AES_128_GCM_SHA256", "needClientAuth": "true", "transport.wantClientAuth": "true"}
	rest := NonTLSOptions(opts)
	if want := map[string]string{"wireFormat.maxFrameSize": "1048576"}; !reflect.DeepEqual(rest, want) {
		t.Errorf("NonTLSOptions = %v, want %v", rest, want)
	}
	if len(opts) != 7 {
		t.Errorf("the caller's options were changed: %v", opts)
	}
	if rest := NonTLSOptions(nil); rest == nil || len(rest) != 0 {
		t.Errorf("NonTLSOptions(nil) = %#v, want an empty map", rest)
	}
}

// TestConfigTLSVersionRange: the versions are those of
// transport.enabledProtocols capped by <sslContext protocol>, raised to
// TLS 1.3 by a list of TLS 1.3 suites only; TLS12Suites drops those.
func TestConfigTLSVersionRange(t *testing.T) {
	for _, tc := range []struct {
		name, protocol string
		opts           map[string]string
		lo, hi         uint16
		tls12          []uint16
		err            string
	}{
		{"default", "", nil, tls.VersionTLS12, tls.VersionTLS13, nil, ""},
		{"TLSv1.3 only", "TLS", map[string]string{"transport.enabledProtocols": "TLSv1.3"}, tls.VersionTLS13, tls.VersionTLS13, nil, ""},
		{"context caps", "TLSv1.2", map[string]string{"transport.enabledProtocols": "TLSv1.3,TLSv1.2"}, tls.VersionTLS12, tls.VersionTLS12, nil, ""},
		{"TLS 1.3 suites only", "TLS", map[string]string{"transport.enabledCipherSuites": "TLS_AES_256_GCM_SHA384,TLS_CHACHA20_POLY1305_SHA256"}, tls.VersionTLS13, tls.VersionTLS13, nil, ""},
		{"mixed suites", "TLS", map[string]string{"transport.enabledCipherSuites": "TLS_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}, tls.VersionTLS12, tls.VersionTLS13,
			[]uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}, ""},
		{"TLS 1.3 only under TLSv1.2", "TLSv1.2", map[string]string{"transport.enabledProtocols": "TLSv1.3"}, 0, 0, nil,
			`option transport.enabledProtocols="TLSv1.3": none of these is allowed by <sslContext protocol="TLSv1.2">`},
		{"TLS 1.3 suites under TLSv1.2", "TLS", map[string]string{"transport.enabledProtocols": "TLSv1.2", "transport.enabledCipherSuites": "TLS_AES_128_GCM_SHA256"}, 0, 0, nil,
			`option transport.enabledCipherSuites="TLS_AES_128_GCM_SHA256" lists TLS 1.3 suites only, but TLS 1.3 is not enabled`},
		{"SSL context", "SSL", nil, 0, 0, nil, `<sslContext protocol="SSL"> is not supported`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := ParseTLSOptions(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			lo, hi, err := o.VersionRange(tc.protocol)
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
					t.Fatalf("VersionRange = %x..%x, %v; want error %q", lo, hi, err, tc.err)
				}
				return
			}
			if err != nil || lo != tc.lo || hi != tc.hi {
				t.Errorf("VersionRange = %x..%x, %v; want %x..%x", lo, hi, err, tc.lo, tc.hi)
			}
			if got := o.TLS12Suites(); !reflect.DeepEqual(got, tc.tls12) {
				t.Errorf("TLS12Suites = %x, want %x", got, tc.tls12)
			}
		})
	}
}
