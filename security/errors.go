package security

import "errors"

// Errors of the security plugins. Refusals of clients also wrap
// engine.ErrBadCredentials or engine.ErrNotAuthorized and carry ActiveMQ's
// text for engine.ClientText.
var (
	// ErrPropertiesTooLarge refuses a users/groups/DN file over
	// maxPropertiesBytes.
	ErrPropertiesTooLarge = errors.New("security: properties file too large")
	// ErrPropertiesUnicode is Java's "Malformed \uxxxx encoding.".
	ErrPropertiesUnicode = errors.New("security: malformed \\uxxxx encoding")
	// ErrLoginConfigSyntax is a login.config that Java's ConfigFile would
	// refuse.
	ErrLoginConfigSyntax = errors.New("security: login.config syntax error")
	// ErrLoginConfigTooLarge refuses a login.config over maxLoginConfigBytes.
	ErrLoginConfigTooLarge = errors.New("security: login.config too large")
	// ErrNoLoginEntry is a configuration name login.config does not define
	// (Java: "No LoginModules configured for <name>").
	ErrNoLoginEntry = errors.New("security: no login.config entry")
	// ErrUnsupportedLoginModule is a login module class Wharf does not
	// implement.
	ErrUnsupportedLoginModule = errors.New("security: unsupported login module")
	// ErrUnsupportedGroupClass is an authorization groupClass other than
	// ActiveMQ's GroupPrincipal and UserPrincipal.
	ErrUnsupportedGroupClass = errors.New("security: unsupported groupClass")
	// ErrUnknownKind is an Authentication.Kind the package does not know.
	ErrUnknownKind = errors.New("security: unknown authentication plugin")
	// ErrDecrypt is an ENC(...) value that cannot be decrypted (decrypt=true
	// in login.config).
	ErrDecrypt = errors.New("security: cannot decrypt ENC() value")
	// ErrLoginFailed is a JAAS login that no module let through; its text
	// is the login module's reason, as LoginException's message.
	ErrLoginFailed = errors.New("security: login failed")
	// ErrRealmCredential is a jetty-realm.properties password in a form
	// Wharf does not read (Jetty's OBF: and CRYPT:).
	ErrRealmCredential = errors.New("security: unsupported realm credential")
)
