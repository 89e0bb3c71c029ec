package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"wharf/engine/message"
)

// LoadFile reads the configuration file at path. It is activemq.xml form
// when the name ends in ".xml", YAML when it ends in ".yaml" or ".yml", and
// otherwise XML when the first non-blank byte is "<". vars are placeholder
// values (see the package doc for the lookup order). Errors name the file
// as path was given.
func LoadFile(path string, vars map[string]string) (*Config, error) {
	return LoadFileWith(path, vars, LoadOptions{})
}

// LoadOptions are settings of one load that come from outside the file
// (wharf run's flags), applied before validation.
type LoadOptions struct {
	// TrustedNetwork sets Config.TrustedNetwork, whatever the file says
	// (wharf run --trusted-network).
	TrustedNetwork bool
	// NoHTTP turns the web server off (Config.HTTP.Enabled), whatever the
	// file says (wharf run --http=false).
	NoHTTP bool
	// Decrypt decrypts one ENC(...) value: ciphertext is the base64 text
	// between the parentheses, password the encryptor's password (from
	// Config.Encryption), and the algorithm is always
	// EncryptionAlgorithm (Jasypt's PBEWithMD5AndDES, as `activemq
	// encrypt` writes it). The loader calls it for every value, from the
	// file or from a placeholder, that is ENC(...) as a whole. Nil makes
	// every ENC() value a load error. Package config does not implement
	// the cipher: wharf run passes package security's.
	Decrypt func(ciphertext, password string) (string, error)
}

// LoadFileWith is LoadFile with o applied.
func LoadFileWith(path string, vars map[string]string, o LoadOptions) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".xml":
		return parseXML(bytes.NewReader(data), path, vars, o)
	case ".yaml", ".yml":
		return parseYAML(bytes.NewReader(data), path, vars, o)
	}
	if t := bytes.TrimLeft(data, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '<' {
		return parseXML(bytes.NewReader(data), path, vars, o)
	}
	return parseYAML(bytes.NewReader(data), path, vars, o)
}

// loader carries one load through its stages: the Config being built, the
// position and label of every setting the file wrote (so validation can
// point at it), and the problems found so far.
type loader struct {
	file     string
	xml      bool
	res      *resolver
	cfg      Config
	pos      map[string]srcPos
	problems []Problem
	// sync detects a top-level <kahaDB> that sets both
	// enableJournalDiskSyncs and journalDiskSyncStrategy.
	sync       syncSet
	kahaDirSet bool
	// lsmDirSet: <wharfLSM> named a directory.
	lsmDirSet bool
	// mkahaDirSet and mkahaFiltersSet: <mKahaDB> named a directory, a
	// filter list (possibly empty).
	mkahaDirSet, mkahaFiltersSet bool
	schedulerDirSet              bool
	tmpDirSet                    bool
	persistenceSet               string // path of the adapter that was set, for duplicates
	// unresolved are the paths of the settings whose placeholders could
	// not be resolved: each is reported once, and fail says nothing more
	// of it ("uri is required" would only repeat the hole it left).
	unresolved map[string]bool
	// opts are the load's settings from outside the file.
	opts LoadOptions
	// noLoginDiscovery: a JAAS plugin said discoverLoginConfig="false".
	noLoginDiscovery bool
	// userNoPassword are the indexes of the <authenticationUser>s
	// without a password attribute.
	userNoPassword []int
}

type srcPos struct {
	line, col int
	label     string // "<kahaDB journalMaxFileLength=\"1kb\">" or "persistence.kahadb.journal_max_file_length"
}

// val is one scalar setting as written in the file.
type val struct {
	raw       string
	path      string
	line, col int
	label     string
	yamlInt   bool // YAML scalar tagged !!int
}

func newLoader(file string, xml bool, vars map[string]string) *loader {
	l := &loader{file: file, xml: xml, res: newResolver(vars), cfg: Default(), pos: map[string]srcPos{}}
	l.res.decrypt = l.decrypt
	return l
}

// decrypt decrypts the ciphertext of an ENC() value found in the
// placeholder ${name} ("" for a value written as ENC(...) in the file),
// through Config.Encryption and LoadOptions.Decrypt.
//
// DEVIATION: ActiveMQ decrypts only the ENC() values of the
// EncryptablePropertyPlaceholderConfigurer's properties files and takes
// any other ENC(...) text literally; Wharf decrypts every ENC() value and
// refuses one it cannot decrypt, since a literal "ENC(...)" password is
// never what was meant.
func (l *loader) decrypt(ciphertext, name string) (string, error) {
	what := "an ENC() value"
	if name != "" {
		what = fmt.Sprintf("${%s} is an ENC() value", name)
	}
	e := l.cfg.Encryption
	if e == nil {
		if l.xml {
			return "", fmt.Errorf("%s but no EncryptablePropertyPlaceholderConfigurer bean (with a StandardPBEStringEncryptor) is configured to decrypt it", what)
		}
		return "", fmt.Errorf("%s but no encryption (password_env or password) is configured to decrypt it", what)
	}
	pw := e.Password
	if pw == "" && e.PasswordEnv != "" {
		v, ok := l.res.env(e.PasswordEnv)
		if !ok || v == "" {
			return "", fmt.Errorf("%s but the encryption password variable %s is not set", what, e.PasswordEnv)
		}
		pw = v
	}
	if pw == "" {
		return "", fmt.Errorf("%s but the encryptor has no password", what)
	}
	if l.opts.Decrypt == nil {
		return "", fmt.Errorf("%s but this program cannot decrypt (config.LoadOptions.Decrypt is nil)", what)
	}
	plain, err := l.opts.Decrypt(ciphertext, pw)
	if err != nil {
		return "", fmt.Errorf("%s that cannot be decrypted with the %s password: %v", what, EncryptionAlgorithm, err)
	}
	return plain, nil
}

func (l *loader) note(path string, line, col int, label string) {
	l.pos[path] = srcPos{line, col, label}
}

func (l *loader) problemAt(path string, line, col int, msg string) {
	l.problems = append(l.problems, Problem{File: l.file, Line: line, Col: col, Path: path, Msg: msg})
}

// fail reports a problem with the setting at path, located where the file
// wrote it (or its closest enclosing setting).
//
// A setting whose value had an unresolved placeholder was reported then:
// fail is silent about it, and about the element holding it (whose
// "name is required" is the same hole seen from above).
func (l *loader) fail(path, format string, args ...any) {
	if l.unresolved[path] {
		return
	}
	for u := range l.unresolved {
		if i := strings.LastIndexAny(u, ".["); i > 0 && u[:i] == path {
			return
		}
	}
	msg := fmt.Sprintf(format, args...)
	for p := path; ; {
		if sp, ok := l.pos[p]; ok {
			l.problemAt(path, sp.line, sp.col, sp.label+": "+msg)
			return
		}
		i := strings.LastIndexAny(p, ".[")
		if i <= 0 {
			break
		}
		p = p[:i]
	}
	l.problemAt(path, 0, 0, path+": "+msg)
}

// text resolves the placeholders in v, reporting a problem on failure. A
// value written as ENC(...) (no placeholder) is decrypted; ENC() values
// that placeholders resolve to are decrypted by the resolver.
func (l *loader) text(v val) (string, bool) {
	s, err := l.res.resolve(v.raw)
	if ct, ok := encValue(v.raw); ok && err == nil {
		s, err = l.decrypt(ct, "")
	}
	if err != nil {
		l.problemAt(v.path, v.line, v.col, v.label+": "+err.Error())
		if v.path != "" {
			if l.unresolved == nil {
				l.unresolved = map[string]bool{}
			}
			l.unresolved[v.path] = true
		}
		return "", false
	}
	return s, true
}

func (l *loader) bad(v val, resolved, what string) {
	msg := v.label + ": " + what
	if resolved != v.raw {
		msg += fmt.Sprintf(" (%q after placeholders)", resolved)
	}
	l.problemAt(v.path, v.line, v.col, msg)
}

func (l *loader) record(v val) { l.note(v.path, v.line, v.col, v.label) }

func (l *loader) setString(dst *string, v val) {
	l.record(v)
	if s, ok := l.text(v); ok {
		*dst = s
	}
}

// setDest sets the name of *dst and its kind t, for settings that name a
// queue or a topic by which key is used. A second name for the same
// destination is a problem: exactly one of queue and topic may be set.
func (l *loader) setDest(dst *message.Destination, t message.DestType, v val) {
	l.record(v)
	s, ok := l.text(v)
	if !ok {
		return
	}
	if dst.Name != "" {
		l.problemAt(v.path, v.line, v.col, fmt.Sprintf("%s: set exactly one of queue and topic, not both (already %s)", v.label, dst))
		return
	}
	*dst = message.Destination{Type: t, Name: s}
}

// setFilter sets a <filteredDestination> selector. A blank one is refused:
// Forward.Selector "" means "forward everything", which is not what a
// filter says. The syntax is checked by validation.
func (l *loader) setFilter(dst *string, v val) {
	l.record(v)
	s, ok := l.text(v)
	if !ok {
		return
	}
	if strings.TrimSpace(s) == "" {
		l.bad(v, s, "the selector is empty (to forward every message, name the destination without a filter)")
		return
	}
	*dst = s
}

func (l *loader) setBool(dst *bool, v val) {
	l.record(v)
	s, ok := l.text(v)
	if !ok {
		return
	}
	b, ok := parseBool(s)
	if !ok {
		l.bad(v, s, `not a boolean (want "true" or "false")`)
		return
	}
	*dst = b
}

func (l *loader) setSize(dst *int64, v val) {
	l.record(v)
	s, ok := l.text(v)
	if !ok {
		return
	}
	if !l.xml && strings.HasPrefix(strings.TrimSpace(s), "-") {
		if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
			*dst = n // negative: reported by validation with the rule it breaks
			return
		}
	}
	n, err := ParseSize(s)
	if err != nil {
		what := "not a size"
		if errors.Is(err, ErrSizeOverflow) {
			what = "size too large"
		}
		l.bad(v, s, what)
		return
	}
	*dst = n
}

func (l *loader) setInt(dst *int, v val) {
	l.record(v)
	s, ok := l.text(v)
	if !ok {
		return
	}
	n, ok := parseInt(s)
	if !ok {
		l.bad(v, s, "not an integer")
		return
	}
	*dst = n
}

// setDuration reads milliseconds in XML (ActiveMQ's long setters) and Go
// duration strings ("30s", "1m30s") in YAML.
func (l *loader) setDuration(dst *time.Duration, v val) {
	l.record(v)
	s, ok := l.text(v)
	if !ok {
		return
	}
	if l.xml {
		d, ok := parseMillis(s)
		if !ok {
			l.bad(v, s, "not a number of milliseconds")
			return
		}
		*dst = d
		return
	}
	if v.yamlInt {
		l.bad(v, s, `not a duration: write it with a unit, e.g. "`+s+`ms" or "30s"`)
		return
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		l.bad(v, s, `not a duration (want e.g. "500ms", "30s", "5m")`)
		return
	}
	*dst = d
}

// finish runs the stages after parsing: derived defaults, validation, freeze.
func (l *loader) finish() (*Config, error) {
	l.cfg.TrustedNetwork = l.cfg.TrustedNetwork || l.opts.TrustedNetwork
	l.cfg.HTTP.Enabled = l.cfg.HTTP.Enabled && !l.opts.NoHTTP
	l.applyDefaults()
	l.validate()
	if len(l.problems) > 0 {
		// Report in file order; parse and validation problems interleave.
		sort.SliceStable(l.problems, func(i, j int) bool {
			a, b := l.problems[i], l.problems[j]
			return a.Line < b.Line || (a.Line == b.Line && a.Col < b.Col)
		})
		return nil, &Error{Problems: l.problems}
	}
	c := freeze(l.cfg)
	return &c, nil
}

// readPropertiesFile loads a PropertyPlaceholderConfigurer location.
func (l *loader) readPropertiesFile(loc string, ignoreMissing bool) error {
	p, err := propertiesPath(loc)
	if err != nil {
		return err
	}
	f, err := os.Open(p)
	if err != nil {
		if ignoreMissing && errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("cannot read properties file %q: %w (set ignoreResourceNotFound to skip a missing file)", p, err)
	}
	defer f.Close()
	if err := readProperties(f, l.res.props); err != nil {
		return fmt.Errorf("reading properties file %q: %w", p, err)
	}
	return nil
}
