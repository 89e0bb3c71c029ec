package config

import "wharf/engine/message"

// Authentication plugin kinds (Authentication.Kind): the element names of
// ActiveMQ's <plugins>.
const (
	AuthSimple          = "simpleAuthenticationPlugin"
	AuthJAAS            = "jaasAuthenticationPlugin"
	AuthJAASCertificate = "jaasCertificateAuthenticationPlugin"
	AuthJAASDual        = "jaasDualAuthenticationPlugin"
)

// Security is what <plugins> configures for security (YAML security:).
// Both parts are optional; with neither, every client is accepted and may
// do everything, and connectors must listen on loopback (unless
// TrustedNetwork).
type Security struct {
	// Authentication is the authentication plugin, nil when none is
	// configured.
	Authentication *Authentication
	// Authorization is <authorizationPlugin><map><authorizationMap>, nil
	// when none is configured.
	Authorization *AuthorizationMap
}

// Authentication is one authentication plugin.
type Authentication struct {
	// Kind is AuthSimple, AuthJAAS, AuthJAASCertificate or AuthJAASDual.
	Kind string
	// Users are <simpleAuthenticationPlugin><users><authenticationUser>
	// (AuthSimple only). Passwords are as written after placeholder
	// resolution; an ENC(...) value has been decrypted by the loader.
	Users []AuthUser
	// AnonymousAccessAllowed is <simpleAuthenticationPlugin
	// anonymousAccessAllowed>: a client with no user name (and no
	// password) is accepted as AnonymousUser in AnonymousGroup. Default
	// false, as ActiveMQ.
	AnonymousAccessAllowed bool
	// AnonymousUser and AnonymousGroup name the anonymous subject;
	// defaults "anonymous" and "anonymous" (SimpleAuthenticationPlugin).
	AnonymousUser, AnonymousGroup string
	// Configuration is the login.config entry the JAAS plugins use
	// (<jaasAuthenticationPlugin configuration>; default "activemq-domain",
	// as JaasAuthenticationPlugin, for the certificate and dual plugins
	// too).
	Configuration string
	// SSLConfiguration is <jaasDualAuthenticationPlugin sslConfiguration>:
	// the entry used for connections on TLS connectors (default
	// "activemq-ssl-domain", as JaasDualAuthenticationPlugin).
	SSLConfiguration string
	// LoginConfig is the login.config file the JAAS plugins read: the
	// java.security.auth.login.config property (-D or placeholder vars),
	// else login.config beside the configuration file, as bin/activemq
	// sets it to ${activemq.conf}/login.config. Empty for AuthSimple.
	LoginConfig string
	// Line is where the plugin element is (0 if built in Go).
	Line int
}

// AuthUser is one <authenticationUser>.
type AuthUser struct {
	Username string
	Password string
	// Groups are the comma-separated groups attribute, trimmed.
	Groups []string
}

// AuthorizationMap is ActiveMQ's DefaultAuthorizationMap as configured by
// <authorizationMap>.
type AuthorizationMap struct {
	// Entries are the <authorizationEntry>s in file order.
	Entries []AuthorizationEntry
	// Default is <defaultEntry><authorizationEntry>, nil when absent: the
	// entry for destinations no other entry matches.
	Default *AuthorizationEntry
	// Temp is <tempDestinationAuthorizationEntry>, nil when absent: the
	// entry for temporary queues and topics.
	Temp *AuthorizationEntry
	// GroupClass is <authorizationMap groupClass>: the principal class of
	// the group names (default org.apache.activemq.jaas.GroupPrincipal).
	GroupClass string
}

// AuthorizationEntry is one <authorizationEntry>.
type AuthorizationEntry struct {
	// Destination is the queue or topic pattern (".", "*", ">"); the zero
	// Destination for Default and Temp. Temp entries have Type
	// message.TempQueue (they cover temp topics too).
	Destination message.Destination
	// Read, Write and Admin are the group lists (comma-separated in the
	// file, trimmed). "everyone" is an ordinary group name, as in ActiveMQ
	// (a subject must hold a group of that name: GuestLoginModule's, or
	// one users.properties/groups.properties gives); only "*" matches
	// every subject that holds a principal.
	Read, Write, Admin []string
	// GroupClass is the entry's groupClass attribute, "" when not set.
	GroupClass string
	// Line is where the entry is (0 if built in Go).
	Line int
}

// SSLContext is <sslContext><sslContext .../></sslContext>: the broker's
// keystore and truststore for every TLS connector.
type SSLContext struct {
	// KeyStore and TrustStore are file paths (a "file:" URL prefix and
	// ${activemq.conf} placeholders are resolved by the loader).
	KeyStore, TrustStore string
	// KeyStorePassword and TrustStorePassword, decrypted if ENC(...).
	KeyStorePassword, TrustStorePassword string
	// KeyStoreKeyPassword is the private key's password when it differs
	// from the store's (keyStoreKeyPassword); "" means KeyStorePassword.
	KeyStoreKeyPassword string
	// KeyStoreType and TrustStoreType are "jks" or "pkcs12" (case
	// insensitive); default "jks" as ActiveMQ's SpringSslContext.
	KeyStoreType, TrustStoreType string
	// Protocol is the SSLContext protocol attribute (default "TLS").
	Protocol string
	// Line is where the element is (0 if built in Go).
	Line int
}

// TLSOptions are a TLS connector's URI options, parsed and checked by the
// loader (the zero value for plain schemes): the only parse of them, which
// security.ServerTLS builds its tls.Config from (tls_options.go). ActiveMQ's SslTransportFactory
// takes needClientAuth and wantClientAuth on the server (unprefixed) and
// transport.needClientAuth, transport.wantClientAuth,
// transport.enabledProtocols and transport.enabledCipherSuites on the
// server socket; Wharf accepts all six.
type TLSOptions struct {
	// NeedClientAuth refuses a client without a certificate the trust
	// store accepts; it wins over WantClientAuth, as in SslTransportServer.
	NeedClientAuth bool
	// WantClientAuth asks for a client certificate but accepts a client
	// without one.
	WantClientAuth bool
	// Versions are transport.enabledProtocols as crypto/tls versions
	// (tls.VersionTLS12, tls.VersionTLS13), in the order written; nil
	// means Wharf's default, TLS 1.2 and 1.3.
	Versions []uint16
	// CipherSuites are transport.enabledCipherSuites as crypto/tls suite
	// IDs, in the order written; nil means Go's defaults. TLS 1.3 suites
	// are accepted but not configurable in Go (all are always enabled).
	CipherSuites []uint16
}

// Jasypt's password-based encryption algorithm, the only one Wharf
// decrypts: what `activemq encrypt` uses.
const EncryptionAlgorithm = "PBEWithMD5AndDES"

// Encryption is how ENC(...) values are decrypted: activemq.xml's Jasypt
// beans (EnvironmentStringPBEConfig, StandardPBEStringEncryptor and
// EncryptablePropertyPlaceholderConfigurer) or YAML encryption:. The loader
// decrypts the configuration's own ENC() values through
// LoadOptions.Decrypt; package security uses this for the ENC() values of
// the files it reads (users.properties).
type Encryption struct {
	// Algorithm is always EncryptionAlgorithm in a loaded Config.
	Algorithm string
	// PasswordEnv names the environment variable holding the password
	// (passwordEnvName; YAML password_env); "" when Password is given.
	PasswordEnv string
	// Password is the password written in the file (password property;
	// YAML password), "" when it comes from PasswordEnv. When both are
	// set, Password wins, as StandardPBEStringEncryptor's own password
	// wins over its config's.
	Password string
	// Line is where the encryptor is configured (0 if built in Go).
	Line int
}
