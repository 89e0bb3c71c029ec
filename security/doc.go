// Package security is Wharf's implementation of ActiveMQ's security
// plugins: authentication (simpleAuthenticationPlugin, and the JAAS
// plugins with login.config's PropertiesLoginModule,
// TextFileCertificateLoginModule and GuestLoginModule), authorization
// (authorizationPlugin's DefaultAuthorizationMap), the broker's
// <sslContext> as a crypto/tls server configuration, and ENC() secrets
// (package enc). It fills the engine's security hooks
// (engine.Authenticator, engine.Authorizer); every protocol calls those
// hooks, so every protocol is secured alike.
//
// New builds a Plugin from config.Security. What it accepts and refuses,
// with ActiveMQ 5.17's client texts, is documented on Plugin.Authenticate,
// Plugin.Authorize and the plugin types (simple, jaasPassword,
// jaasCertificate, jaasDual, authzMap).
//
// # Ownership and concurrency
//
// A Plugin is built once and then immutable, except for two caches, each
// safe for concurrent use:
//   - JAAS properties files (users, groups, DN files) with reload=true are
//     checked on every login (os.Stat, as ActiveMQ's ReloadableProperties
//     checks lastModified); a changed file is re-read by one goroutine
//     under the file's mutex and the parsed snapshot swapped in with an
//     atomic pointer, so logins in flight keep the snapshot they started
//     with. Nothing runs in the background; Close has nothing to stop.
//   - Authorization decisions per (destination, action) are cached in a
//     bounded copy-on-write map (read lock-free, misses under a mutex),
//     so Authorize on a known destination takes no lock and allocates
//     nothing when it allows.
//
// Authenticate and Authorize may be called from any goroutine.
//
// Files: properties.go (java.util.Properties syntax), loginconfig.go
// (Java's ConfigFile syntax), jaas.go (login modules and LoginContext's
// control flags), propsfile.go (loaded and reloaded files, ENC()),
// dn.go (a certificate subject as Java's getSubjectDN().getName()),
// authz.go (DefaultAuthorizationMap), plugin.go (the plugins).
package security
