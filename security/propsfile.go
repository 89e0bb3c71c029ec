package security

import (
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"wharf/security/enc"
)

// decryptENC decrypts the text inside ENC(...) with the password, as
// Jasypt's PBEWithMD5AndDES does; a variable so tests can stand in for it.
var decryptENC = enc.Decrypt

// encryptionPasswordEnv is where Jasypt's EnvironmentStringPBEConfig reads
// the password, as ActiveMQ's EncryptionSupport configures it.
const encryptionPasswordEnv = "ACTIVEMQ_ENCRYPTION_PASSWORD"

// propsFile is one users/groups/DN file of a login module, shared by every
// module that names the same absolute path (ActiveMQ's PropertiesLoader
// keeps one ReloadableProperties per path; the first module's reload and
// decrypt options win, as there).
//
// Concurrency: snapshot is read lock-free by logins on any goroutine; a
// reload (reload=true and the file's modification time or size changed
// since the last load, checked on every login as ReloadableProperties
// does) is done by one goroutine under mu and swapped in atomically.
type propsFile struct {
	path    string
	reload  bool
	decrypt bool
	log     *slog.Logger

	mu    sync.Mutex // serialises reloads
	mtime time.Time  // of the loaded file
	size  int64      // bytes of the loaded file
	// failed is set while the file cannot be loaded (logged once).
	failed bool
	snap   atomic.Pointer[propsSnapshot]
}

// propsSnapshot is one load of a propsFile, with the views the modules
// use, computed once per load.
type propsSnapshot struct {
	props *properties
	// groupsOf is ReloadableProperties.invertedPropertiesValuesMap: for
	// a groups file (group=user1,user2) each user's groups. The user list
	// is split on "," and NOT trimmed, as in ActiveMQ: "g=a, b" gives
	// " b" the group, not "b".
	groupsOf map[string][]string
	// userOfDN is invertedPropertiesMap: for a DN file (user=DN) each
	// DN's user, regexp values (/.../) excluded.
	userOfDN map[string]string
	// dnRegexps are the /regexp/ values in file order
	// (regexpPropertiesMap).
	dnRegexps []dnRegexp
}

type dnRegexp struct {
	user string
	re   *regexp.Regexp
}

// load reads the file now; an error leaves the previous snapshot.
func (f *propsFile) load() error {
	fi, err := os.Stat(f.path)
	if err != nil {
		return err
	}
	if fi.Size() > maxPropertiesBytes {
		return fmt.Errorf("%s: %w: %d bytes (limit %d)", f.path, ErrPropertiesTooLarge, fi.Size(), maxPropertiesBytes)
	}
	b, err := os.ReadFile(f.path)
	if err != nil {
		return err
	}
	p, err := parseProperties(b)
	if err != nil {
		return fmt.Errorf("%s: %w", f.path, err)
	}
	if f.decrypt {
		if err := decryptProperties(p); err != nil {
			return fmt.Errorf("%s: %w", f.path, err)
		}
	}
	f.snap.Store(newSnapshot(p, f.log.With("file", f.path)))
	f.mtime, f.size = fi.ModTime(), fi.Size()
	return nil
}

func newSnapshot(p *properties, log *slog.Logger) *propsSnapshot {
	s := &propsSnapshot{props: p, groupsOf: map[string][]string{}, userOfDN: map[string]string{}}
	for _, k := range p.keys {
		v := p.values[k]
		for _, u := range strings.Split(v, ",") {
			s.groupsOf[u] = appendUnique(s.groupsOf[u], k)
		}
		if len(v) > 2 && v[0] == '/' && v[len(v)-1] == '/' {
			// Java's Pattern.matcher(dn).matches() is a whole-string
			// match; RE2 lacks some Java constructs (backreferences,
			// lookaround): those are ignored with a warning, as
			// ActiveMQ ignores a regexp that does not compile.
			re, err := regexp.Compile(`^(?:` + v[1:len(v)-1] + `)$`)
			if err != nil {
				log.Warn("ignoring invalid regexp", "user", k, "err", err)
				continue
			}
			s.dnRegexps = append(s.dnRegexps, dnRegexp{user: k, re: re})
		} else {
			s.userOfDN[v] = k
		}
	}
	return s
}

func appendUnique(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// obtain is ReloadableProperties.obtained: the current snapshot, reloaded
// first when reload is on and the file changed. A reload that fails is
// logged at Error and leaves an empty snapshot, as ActiveMQ's load failure
// leaves empty Properties (every login through the file fails until it is
// fixed): fail closed.
func (f *propsFile) obtain() *propsSnapshot {
	if !f.reload {
		return f.snap.Load()
	}
	fi, err := os.Stat(f.path)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil && fi.ModTime().Equal(f.mtime) && fi.Size() == f.size {
		return f.snap.Load()
	}
	if err == nil {
		err = f.load()
		if err == nil {
			f.failed = false
			f.log.Info("properties reloaded", "file", f.path, "entries", len(f.snap.Load().props.keys))
			return f.snap.Load()
		}
	}
	if !f.failed {
		// Logged once per failure, not per login.
		f.log.Error("properties reload failed; refusing logins through it until fixed", "file", f.path, "err", err)
		f.failed = true
	}
	f.snap.Store(newSnapshot(&properties{values: map[string]string{}}, f.log))
	f.mtime, f.size = time.Time{}, -1
	return f.snap.Load()
}

// decryptProperties is ActiveMQ's EncryptionSupport.decrypt: every value
// of the form ENC(...) (spaces around it ignored, as Jasypt's
// PropertyValueEncryptionUtils) is replaced by its decryption with the
// password in ACTIVEMQ_ENCRYPTION_PASSWORD.
func decryptProperties(p *properties) error {
	var pw string
	for _, k := range p.keys {
		inner, ok := unwrapENC(p.values[k])
		if !ok {
			continue
		}
		if decryptENC == nil {
			return fmt.Errorf("%w: %s: ENC() support is not built in", ErrDecrypt, k)
		}
		if pw == "" {
			pw = os.Getenv(encryptionPasswordEnv)
			if pw == "" {
				return fmt.Errorf("%w: %s: %s is not set", ErrDecrypt, k, encryptionPasswordEnv)
			}
		}
		v, err := decryptENC(inner, pw)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrDecrypt, k, err)
		}
		p.values[k] = v
	}
	return nil
}

func unwrapENC(v string) (string, bool) {
	t := strings.TrimFunc(v, func(r rune) bool { return r <= ' ' })
	if len(t) < len("ENC()") || !strings.HasPrefix(t, "ENC(") || !strings.HasSuffix(t, ")") {
		return v, false
	}
	return t[len("ENC(") : len(t)-1], true
}
