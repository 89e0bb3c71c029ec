package config

import (
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// This file is the one parser of a TLS connector's URI options: the
// loader checks them with it at load time (errors naming the option and
// its value), and security.ServerTLS builds its tls.Config from the
// TLSOptions it yields, so that no value can pass the one and fail the
// other at start-up.

// tlsOptions are the connector options accepted on TLS connectors only:
// unprefixed, SslTransportServer's setters; with transport., the
// SSLServerSocket's (TcpTransportServer.configureServerSocket).
var tlsOptions = map[string]bool{
	"needClientAuth": true, "wantClientAuth": true,
	"transport.needClientAuth": true, "transport.wantClientAuth": true,
	"transport.enabledProtocols": true, "transport.enabledCipherSuites": true,
}

// NonTLSOptions returns a copy of a connector's options without the TLS
// ones (those the loader parsed into Transport.TLSOptions): what is left
// for the transport and the protocol.
func NonTLSOptions(opts map[string]string) map[string]string {
	rest := maps.Clone(opts)
	if rest == nil {
		rest = map[string]string{}
	}
	maps.DeleteFunc(rest, func(k, _ string) bool { return tlsOptions[k] })
	return rest
}

// ParseTLSOptions parses the TLS options of a connector's options as the
// loader does (other options are ignored); the error joins one error per
// bad option, each naming it and its value. It is for callers that build
// a Transport in Go rather than load it.
func ParseTLSOptions(opts map[string]string) (TLSOptions, error) {
	var errs []error
	o := parseTLSOptions(opts, func(key, msg string) {
		errs = append(errs, fmt.Errorf("option %s=%q: %s", key, opts[key], msg))
	})
	return o, errors.Join(errs...)
}

// parseTLSOptions checks and parses the TLS options of one connector,
// calling bad for each problem with the option's name. Where ActiveMQ
// (Java 17's SSLSocket setters) and Wharf differ:
//   - booleans are "true" or "false" in any case; ActiveMQ reads anything
//     else as false, Wharf refuses it;
//   - need and want are each true when either spelling says so;
//   - TLSv1, TLSv1.1, SSLv3 and SSLv2 are refused (Wharf's minimum is TLS
//     1.2), SSLv2Hello is ignored (Go never reads an SSLv2 ClientHello);
//   - cipher suites are the names crypto/tls implements: the TLS 1.3 ones
//     are TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384 and
//     TLS_CHACHA20_POLY1305_SHA256, Java 17's three too; the CCM ones of
//     RFC 8446 are refused, as Java's SunJSSE refuses them. Go's insecure
//     suites (RC4, 3DES, CBC with SHA-256) are refused;
//     TLS_EMPTY_RENEGOTIATION_INFO_SCSV is a signal, not a suite (Go
//     always sends it): ignored, but a list of nothing else names no
//     suite, with which Java could negotiate nothing.
func parseTLSOptions(opts map[string]string, bad func(key, msg string)) TLSOptions {
	var o TLSOptions
	boolean := func(key string, dst *bool) {
		s, ok := opts[key]
		if !ok {
			return
		}
		b, ok := parseBool(s)
		if !ok {
			bad(key, `not a boolean (want "true" or "false")`)
			return
		}
		*dst = *dst || b
	}
	boolean("needClientAuth", &o.NeedClientAuth)
	boolean("transport.needClientAuth", &o.NeedClientAuth)
	boolean("wantClientAuth", &o.WantClientAuth)
	boolean("transport.wantClientAuth", &o.WantClientAuth)
	if s, ok := opts["transport.enabledProtocols"]; ok {
		for _, name := range splitGroups(s) {
			switch name {
			case "TLSv1.2":
				o.Versions = append(o.Versions, tls.VersionTLS12)
			case "TLSv1.3":
				o.Versions = append(o.Versions, tls.VersionTLS13)
			case "SSLv2Hello":
			case "TLSv1", "TLSv1.1", "SSLv3", "SSLv2":
				bad("transport.enabledProtocols", fmt.Sprintf("%s is not supported: Wharf's minimum is TLS 1.2 (enable TLSv1.2 and/or TLSv1.3)", name))
			default:
				bad("transport.enabledProtocols", fmt.Sprintf("%q is not a protocol name (want TLSv1.2 and/or TLSv1.3)", name))
			}
		}
		if len(o.Versions) == 0 && !slices.ContainsFunc(splitGroups(s), func(n string) bool { return n != "SSLv2Hello" }) {
			bad("transport.enabledProtocols", "names no protocol (want TLSv1.2 and/or TLSv1.3)")
		}
	}
	if s, ok := opts["transport.enabledCipherSuites"]; ok {
		names := splitGroups(s)
		for _, name := range names {
			if name == "TLS_EMPTY_RENEGOTIATION_INFO_SCSV" {
				continue
			}
			id, insecure, known := cipherSuite(name)
			switch {
			case !known:
				bad("transport.enabledCipherSuites", fmt.Sprintf("%q is not a cipher suite Go implements (write IANA names such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)", name))
			case insecure:
				bad("transport.enabledCipherSuites", fmt.Sprintf("%s is insecure and not supported by Wharf", name))
			default:
				o.CipherSuites = append(o.CipherSuites, id)
			}
		}
		if !slices.ContainsFunc(names, func(n string) bool { return n != "TLS_EMPTY_RENEGOTIATION_INFO_SCSV" }) {
			bad("transport.enabledCipherSuites", "names no cipher suite (TLS_EMPTY_RENEGOTIATION_INFO_SCSV is a signal, not a suite)")
		}
	}
	return o
}

// cipherSuite looks a Java/IANA cipher suite name up in crypto/tls.
func cipherSuite(name string) (id uint16, insecure, known bool) {
	for _, c := range tls.CipherSuites() {
		if c.Name == name {
			return c.ID, false, true
		}
	}
	for _, c := range tls.InsecureCipherSuites() {
		if c.Name == name {
			return c.ID, true, true
		}
	}
	return 0, false, false
}

// contextMaxVersion is the highest version <sslContext protocol> lets a
// connector negotiate: the protocol is the name given to Java's
// SSLContext.getInstance, and "TLS" (ActiveMQ's default) and "TLSv1.3"
// enable TLS 1.2 and 1.3 as Java 17 does, "TLSv1.2" caps it at TLS 1.2.
// DEVIATION: "SSL", which Java maps to the same context as "TLS", is
// refused with the versions below TLS 1.2, since it reads as a request for
// them. The error completes a sentence starting with the protocol.
func contextMaxVersion(protocol string) (uint16, error) {
	switch protocol {
	case "TLS", "TLSv1.3":
		return tls.VersionTLS13, nil
	case "TLSv1.2":
		return tls.VersionTLS12, nil
	case "SSL", "SSLv3", "TLSv1", "TLSv1.1":
		return 0, errors.New("is not supported: Wharf's minimum is TLS 1.2 (write TLS, TLSv1.2 or TLSv1.3)")
	}
	return 0, errors.New("is not a protocol Wharf knows (write TLS, TLSv1.2 or TLSv1.3)")
}

// VersionRange is the lowest and highest TLS version a connector with
// these options negotiates under <sslContext protocol="..."> ("" is
// "TLS", for an SSLContext built in Go): TLS 1.2 to 1.3 by default, the
// lowest and highest of Versions when set, capped by the context as Java's
// SSLContext caps its sockets. A list of TLS 1.3 suites only raises the
// minimum to TLS 1.3: Java could negotiate nothing older with them.
// The errors name the option whose versions are empty.
func (o TLSOptions) VersionRange(protocol string) (lo, hi uint16, err error) {
	if protocol == "" {
		protocol = "TLS"
	}
	hi, err = contextMaxVersion(protocol)
	if err != nil {
		return 0, 0, fmt.Errorf("<sslContext protocol=%q> %w", protocol, err)
	}
	lo = tls.VersionTLS12
	if len(o.Versions) > 0 {
		lo, hi = max(lo, slices.Min(o.Versions)), min(hi, slices.Max(o.Versions))
		if lo > hi {
			return 0, 0, fmt.Errorf("option transport.enabledProtocols=%q: none of these is allowed by <sslContext protocol=%q>", versionNames(o.Versions), protocol)
		}
	}
	if len(o.CipherSuites) > 0 && len(o.TLS12Suites()) == 0 {
		if hi < tls.VersionTLS13 {
			return 0, 0, fmt.Errorf("option transport.enabledCipherSuites=%q lists TLS 1.3 suites only, but TLS 1.3 is not enabled", suiteNames(o.CipherSuites))
		}
		lo = tls.VersionTLS13
	}
	return lo, hi, nil
}

// TLS12Suites are the suites of CipherSuites that TLS 1.2 uses (nil when
// there are none): crypto/tls lets only those be chosen, and always
// enables its three TLS 1.3 suites (DEVIATION: Java turns TLS 1.3 off
// when no TLS 1.3 suite is listed).
func (o TLSOptions) TLS12Suites() []uint16 {
	var ids []uint16
	for _, id := range o.CipherSuites {
		for _, c := range tls.CipherSuites() {
			if c.ID == id && slices.Contains(c.SupportedVersions, tls.VersionTLS12) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// versionNames writes versions as transport.enabledProtocols does.
func versionNames(vs []uint16) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = strings.Replace(tls.VersionName(v), "TLS 1", "TLSv1", 1)
	}
	return strings.Join(names, ",")
}

// suiteNames writes suites as transport.enabledCipherSuites does.
func suiteNames(ids []uint16) string {
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = tls.CipherSuiteName(id)
	}
	return strings.Join(names, ",")
}

// checkTLSContext checks a TLS connector's options against the
// <sslContext> it was given, at load time rather than when
// security.ServerTLS builds the listener: the versions left under the
// context's protocol, and client authentication, which needs a trust
// store (Java would fall back to the JDK's cacerts; Wharf refuses). A
// context protocol Wharf refuses is reported once, on the sslContext.
func (l *loader) checkTLSContext(upath string, t *Transport) {
	if _, err := contextMaxVersion(t.TLS.Protocol); err != nil {
		return
	}
	if _, _, err := t.TLSOptions.VersionRange(t.TLS.Protocol); err != nil {
		l.fail(upath, "%v", err)
	}
	if t.TLS.TrustStore != "" || l.unresolved["ssl_context.trust_store"] {
		return
	}
	for _, key := range []string{"needClientAuth", "transport.needClientAuth", "wantClientAuth", "transport.wantClientAuth"} {
		if b, _ := parseBool(t.Options[key]); b {
			l.fail(upath, "option %s=%q needs a %s in the SSL context to verify client certificates", key, t.Options[key], l.word("trustStore", "trust_store"))
		}
	}
}
