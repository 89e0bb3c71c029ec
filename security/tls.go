package security

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"

	"wharf/engine/config"
)

// The errors of ServerTLS, wrapped in a *StoreError for a key or trust
// store or naming the option for a connector's TLS options. (They sit here
// rather than in errors.go while authentication is written in parallel;
// move them there on merge.)
var (
	// ErrStorePassword: the store's integrity check or the key's
	// decryption failed. JKS and PKCS12 cannot tell a wrong password from
	// a damaged file.
	ErrStorePassword = errors.New("wrong password or damaged file")
	// ErrStoreFormat: the file is neither JKS nor PKCS12, or is truncated.
	ErrStoreFormat = errors.New("not a JKS or PKCS12 file")
	// ErrStoreType: KeyStoreType or TrustStoreType is not jks or pkcs12.
	ErrStoreType = errors.New("unsupported store type")
	// ErrNoKey: the keystore holds no private key entry.
	ErrNoKey = errors.New("no private key entry")
	// ErrNoTrusted: the truststore holds no certificate.
	ErrNoTrusted = errors.New("no trusted certificate")
	// ErrTLSOption: a connector's TLS options cannot be served with its
	// <sslContext> (no version left under its protocol, or client
	// authentication without a trustStore).
	ErrTLSOption = errors.New("bad TLS option")
	// ErrNoSSLContext: a TLS connector without <sslContext> or keyStore.
	ErrNoSSLContext = errors.New("a TLS connector needs an <sslContext> with a keyStore")
)

// StoreError is a failure to read a keystore or truststore: Role is
// "keystore" or "truststore", Path the file, Type the store type it was
// read as ("jks" or "pkcs12"; the configured type when the file could not
// be read). Err is one of the Err* above or an I/O error.
type StoreError struct {
	Role, Path, Type string
	Err              error
}

func (e *StoreError) Error() string {
	return fmt.Sprintf("%s %s (%s): %v", e.Role, e.Path, e.Type, e.Err)
}

func (e *StoreError) Unwrap() error { return e.Err }

// ServerTLS builds the server side *tls.Config of a TLS connector from
// the broker's <sslContext> and the connector's TLS options, as ActiveMQ
// 5.17 (SpringSslContext, SslTransportFactory) sets up its SSLContext and
// server sockets. The options were parsed and checked by the config loader
// (config.TLSOptions; config.ParseTLSOptions for a connector built in Go):
// ServerTLS does not read option strings.
//
// The keyStore holds the broker's key: its private key entry with its
// certificate chain. A store with several private key entries gives the
// one whose alias sorts first (Java's SunX509 key manager takes the first
// suitable alias of the store's unspecified order; name one entry per
// store to be sure). The key's password is KeyStoreKeyPassword, or
// KeyStorePassword when that is empty (a PKCS12 store has one password:
// KeyStorePassword). The trustStore's certificates verify client
// certificates: its trusted certificate entries and, as Java's
// TrustStoreUtil does, the first certificate of each JKS key entry.
//
// KeyStoreType and TrustStoreType are "jks" (the default when empty) or
// "pkcs12", in any case; like Java 9 and later (keystore.type.compat), a
// store in the other of the two formats is read too: the file's first
// bytes say which it is. Passwords arrive decrypted (ENC() is the
// loader's business).
//
// From the options:
//   - NeedClientAuth: a client must present a certificate the trustStore
//     verifies (tls.RequireAndVerifyClientCert); WantClientAuth: one is
//     asked for and verified if given (tls.VerifyClientCertIfGiven); need
//     wins over want as in SslTransportServer.bind. Either needs a
//     trustStore: the loader refuses a connector asking for one without
//     it, and ServerTLS refuses too rather than build a config that would
//     verify clients against the system's roots.
//   - the versions are opts.VersionRange of <sslContext protocol>;
//   - the cipher suites are opts.TLS12Suites (Go's defaults when none).
//
// Errors name the file and store type (a *StoreError) or the option.
func ServerTLS(ssl *config.SSLContext, opts config.TLSOptions) (*tls.Config, error) {
	if ssl == nil || ssl.KeyStore == "" {
		return nil, ErrNoSSLContext
	}
	lo, hi, err := opts.VersionRange(ssl.Protocol)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTLSOption, err)
	}
	tc := &tls.Config{MinVersion: lo, MaxVersion: hi, CipherSuites: opts.TLS12Suites()}

	keyPassword := ssl.KeyStoreKeyPassword
	if keyPassword == "" {
		keyPassword = ssl.KeyStorePassword
	}
	cert, err := loadKeyStore(ssl.KeyStore, ssl.KeyStoreType, ssl.KeyStorePassword, keyPassword)
	if err != nil {
		return nil, err
	}
	tc.Certificates = []tls.Certificate{cert}

	if ssl.TrustStore != "" {
		pool, err := loadTrustStore(ssl.TrustStore, ssl.TrustStoreType, ssl.TrustStorePassword)
		if err != nil {
			return nil, err
		}
		tc.ClientCAs = pool
	}
	switch {
	case opts.NeedClientAuth:
		tc.ClientAuth = tls.RequireAndVerifyClientCert
	case opts.WantClientAuth:
		tc.ClientAuth = tls.VerifyClientCertIfGiven
	}
	if tc.ClientAuth != tls.NoClientCert && tc.ClientCAs == nil {
		name := "wantClientAuth"
		if opts.NeedClientAuth {
			name = "needClientAuth"
		}
		return nil, fmt.Errorf("%w: %s=true needs a trustStore in <sslContext> to verify client certificates", ErrTLSOption, name)
	}
	return tc, nil
}

// Store formats, told apart by the first bytes of the file as Java's
// keystore.type.compat does.
const (
	typeJKS    = "jks"
	typePKCS12 = "pkcs12"
)

// readStore reads path and returns its bytes and its format (typeJKS or
// typePKCS12), checking the configured type.
func readStore(role, path, configured string) ([]byte, string, error) {
	typ := strings.ToLower(configured)
	if typ == "" {
		typ = typeJKS // SpringSslContext's default (KeyStore.getDefaultType)
	}
	if typ != typeJKS && typ != typePKCS12 {
		return nil, "", &StoreError{role, path, configured, fmt.Errorf("%w %q: want jks or pkcs12", ErrStoreType, configured)}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", &StoreError{role, path, typ, err}
	}
	switch {
	case len(data) >= 4 && binary.BigEndian.Uint32(data) == 0xfeedfeed:
		return data, typeJKS, nil
	case len(data) >= 4 && binary.BigEndian.Uint32(data) == 0xcececece:
		return nil, "", &StoreError{role, path, typ, fmt.Errorf("%w: this is a JCEKS store, which Wharf does not read (convert it: keytool -importkeystore -deststoretype pkcs12)", ErrStoreFormat)}
	case len(data) >= 2 && data[0] == 0x30: // a DER SEQUENCE: PFX (RFC 7292 §4)
		return data, typePKCS12, nil
	}
	return nil, "", &StoreError{role, path, typ, ErrStoreFormat}
}

func loadKeyStore(path, configured, storePassword, keyPassword string) (tls.Certificate, error) {
	const role = "keystore"
	data, typ, err := readStore(role, path, configured)
	if err != nil {
		return tls.Certificate{}, err
	}
	fail := func(err error) (tls.Certificate, error) {
		return tls.Certificate{}, &StoreError{role, path, typ, err}
	}
	var (
		key   crypto.PrivateKey
		chain []*x509.Certificate
	)
	switch typ {
	case typeJKS:
		ks := keystore.New()
		if err := ks.Load(bytes.NewReader(data), []byte(storePassword)); err != nil {
			return fail(jksError(err))
		}
		var alias string
		aliases := ks.Aliases()
		sort.Strings(aliases)
		for _, a := range aliases {
			if ks.IsPrivateKeyEntry(a) {
				alias = a
				break
			}
		}
		if alias == "" {
			return fail(ErrNoKey)
		}
		e, err := ks.GetPrivateKeyEntry(alias, []byte(keyPassword))
		if err != nil {
			return fail(fmt.Errorf("key %q: %w (keyStoreKeyPassword, or keyStorePassword when it is not set)", alias, ErrStorePassword))
		}
		if key, err = x509.ParsePKCS8PrivateKey(e.PrivateKey); err != nil {
			return fail(fmt.Errorf("key %q: %v", alias, err))
		}
		for i, c := range e.CertificateChain {
			cert, err := x509.ParseCertificate(c.Content)
			if err != nil {
				return fail(fmt.Errorf("key %q: certificate %d: %v", alias, i, err))
			}
			chain = append(chain, cert)
		}
	case typePKCS12:
		k, leaf, cas, err := pkcs12.DecodeChain(data, storePassword)
		if err != nil {
			if strings.Contains(err.Error(), "private key missing") {
				return fail(ErrNoKey)
			}
			return fail(pkcs12Error(err))
		}
		key, chain = k, append([]*x509.Certificate{leaf}, cas...)
	}
	return keyPair(key, chain, fail)
}

// keyPair orders chain with the certificate of key first (go-pkcs12
// takes the first certificate bag as the leaf, which a PKCS12 file need
// not put first) and checks that it matches key.
func keyPair(key crypto.PrivateKey, chain []*x509.Certificate, fail func(error) (tls.Certificate, error)) (tls.Certificate, error) {
	signer, ok := key.(crypto.Signer)
	if !ok {
		return fail(fmt.Errorf("unsupported private key type %T", key))
	}
	pub, ok := signer.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok {
		return fail(fmt.Errorf("unsupported private key type %T", key))
	}
	leaf := -1
	for i, c := range chain {
		if pub.Equal(c.PublicKey) {
			leaf = i
			break
		}
	}
	if leaf < 0 {
		return fail(errors.New("no certificate of the private key entry matches its key"))
	}
	chain[0], chain[leaf] = chain[leaf], chain[0]
	cert := tls.Certificate{PrivateKey: key, Leaf: chain[0]}
	for _, c := range chain {
		cert.Certificate = append(cert.Certificate, c.Raw)
	}
	return cert, nil
}

func loadTrustStore(path, configured, password string) (*x509.CertPool, error) {
	const role = "truststore"
	data, typ, err := readStore(role, path, configured)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*x509.CertPool, error) {
		return nil, &StoreError{role, path, typ, err}
	}
	var certs []*x509.Certificate
	switch typ {
	case typeJKS:
		ks := keystore.New()
		if err := ks.Load(bytes.NewReader(data), []byte(password)); err != nil {
			return fail(jksError(err))
		}
		aliases := ks.Aliases()
		sort.Strings(aliases)
		for _, a := range aliases {
			var der []byte
			if e, err := ks.GetTrustedCertificateEntry(a); err == nil {
				der = e.Certificate.Content
			} else if ch, err := ks.GetPrivateKeyEntryCertificateChain(a); err == nil && len(ch) > 0 {
				der = ch[0].Content
			} else {
				continue
			}
			c, err := x509.ParseCertificate(der)
			if err != nil {
				return fail(fmt.Errorf("certificate %q: %v", a, err))
			}
			certs = append(certs, c)
		}
	case typePKCS12:
		cs, err := pkcs12.DecodeTrustStore(data, password)
		if err != nil {
			return fail(pkcs12Error(err))
		}
		certs = cs
	}
	if len(certs) == 0 {
		return fail(ErrNoTrusted)
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// jksError maps keystore-go's Load errors: a digest mismatch is a wrong
// password (or damage), the rest a damaged or truncated file.
func jksError(err error) error {
	if strings.Contains(err.Error(), "invalid digest") {
		return ErrStorePassword
	}
	return fmt.Errorf("%w: %v", ErrStoreFormat, err)
}

func pkcs12Error(err error) error {
	if errors.Is(err, pkcs12.ErrIncorrectPassword) || errors.Is(err, pkcs12.ErrDecryption) {
		return ErrStorePassword
	}
	return fmt.Errorf("%w: %v", ErrStoreFormat, err)
}
