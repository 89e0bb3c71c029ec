// Package layering has no code: its test checks, with go list, that the
// module's packages import only what the layering rules of
// docs/architecture.md ("Imports") allow, so that the rules stay true.
package layering
