// Package config loads Wharf's configuration from ActiveMQ's activemq.xml or
// from the native YAML form into one validated, immutable Config.
//
// # Stages
//
// Every load runs the same four stages, whichever form the file is in:
//
//  1. parse: the XML parser (ParseXML) or the YAML parser (ParseYAML) starts
//     from Default() and overlays what the file sets, converting sizes,
//     booleans and durations and resolving ${...} placeholders. It records
//     where each setting was written so later stages can point at it.
//  2. defaults: settings whose default depends on another are derived
//     (the KahaDB and scheduler directories from dataDirectory, the memory
//     store when persistent="false", connector names and URI parts, the
//     default virtual topic when no <destinationInterceptors> are given).
//  3. validate: ranges, duplicates and cross-field rules.
//  4. freeze: the result is deep-copied; nothing else refers to it.
//
// No stage stops at the first problem. Every problem is collected with its
// file:line:col and setting path, and the load fails once with an *Error
// listing them all in file order. Anything Wharf does not implement (an
// element, attribute, YAML key, URI scheme or option) is a problem that
// names it; nothing is silently ignored.
//
// # Forms
//
// activemq.xml: Spring's <beans> wrapper (namespaces and xsi:schemaLocation
// are accepted and ignored) around one <broker>, or a bare <broker>. The
// PropertyPlaceholderConfigurer bean's properties files are read for
// placeholder values; <import resource="jetty.xml"/> is read from beside
// the file for the web server's settings (HTTP: its jettyPort,
// securityLoginService, Constraint and ServerConnector beans; the rest of
// jetty.xml is Jetty's wiring and is not read); the SpringContextHook
// shutdown hook and <managementContext createConnector="false"/> are
// accepted and change nothing. Attributes in Wharf's namespace (WharfNS)
// carry Wharf's own settings: <broker wharf:shards wharf:trustedNetwork>. Durations
// are milliseconds, as ActiveMQ's setters take them; sizes are ActiveMQ
// size strings (ParseSize).
//
// YAML: the same settings under snake_case keys; sizes are integers or size
// strings, durations are Go duration strings ("30s"). docs/config.md in the
// repository lists every element, attribute and key with its default.
//
// Placeholders: ${name} or ${name:default} in any value, looked up in the
// caller's vars, then the properties files, then the environment (exact
// name, then upper-cased with "." and "-" as "_"), then bin/activemq's
// activemq.base/home/conf/data defaults. See resolver for details.
//
// # Concurrency
//
// A Config returned by a loader must not be modified; any goroutine may read
// it and call PolicyFor and CompositeFor concurrently. The loaders
// themselves share no state and may run concurrently.
package config
