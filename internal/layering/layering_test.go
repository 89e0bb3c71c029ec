package layering

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// A rule constrains what the packages matching from may depend on,
// directly or through other packages: only the standard library and the
// packages matching allow (when allow is set), and none matching deny.
// Patterns are import paths; "x/..." matches x and every package under it,
// and "*" matches one path element. Only non-test imports count: tests
// (engine's against real stores, say) may import what they need.
type rule struct {
	name  string
	from  []string
	allow []string // nil: anything not denied
	deny  []string
	// opaque: allowed third-party packages whose own dependencies are
	// not checked (a chain through one of them is not reported).
	opaque []string
}

// storageThirdParty is the third-party modules storage/... may use: badger
// for storage/lsm, pgx for storage/jdbc. Adding one is a decision to make here, in review. What
// such a module imports itself is its own business (rule.opaque).
var storageThirdParty = []string{
	"github.com/dgraph-io/badger/v4/...", // storage/lsm (issue 19)
	"github.com/jackc/pgx/v5/...",        // storage/jdbc (issue 19)
}

var rules = []rule{
	{
		name: "storage depends only on the standard library, engine, the OpenWire codec and stored form, and the named third-party modules",
		from: []string{"wharf/storage/..."},
		allow: slices.Concat([]string{
			"wharf/storage/...",
			"wharf/engine/...",
			"wharf/protocols/openwire/wire",
			"wharf/protocols/openwire/marshal",
		}, storageThirdParty),
		opaque: storageThirdParty,
	},
	{
		name:  "the OpenWire stored form depends only on the standard library, engine/message and the OpenWire codec",
		from:  []string{"wharf/protocols/openwire/marshal"},
		allow: []string{"wharf/engine/message", "wharf/protocols/openwire/wire"},
	},
	{
		name:  "wire packages depend only on the standard library",
		from:  []string{"wharf/protocols/*/wire", "wharf/protocols/transport/ws/wire"},
		allow: []string{},
	},
	{
		name: "the engine depends on no protocol, store, security, bench or command package",
		from: []string{"wharf/engine/..."},
		deny: []string{"wharf/protocols/...", "wharf/storage/...", "wharf/security/...", "wharf/bench/...", "wharf/cmd/..."},
	},
	{
		// A bridge is an OpenWire client of its peer: it needs the
		// project's client, its codec, and the stored form to turn the
		// engine's messages into OpenWire ones. Locally it is a client of
		// the engine's command API, like any protocol session, so it
		// needs no server-side protocol code, store or security package.
		name: "cluster depends on the engine and the OpenWire client, codec and stored form only",
		from: []string{"wharf/cluster/..."},
		deny: []string{
			"wharf/storage/...", "wharf/security/...", "wharf/bench/...", "wharf/cmd/...",
			"wharf/protocols/openwire", "wharf/protocols/stomp/...", "wharf/protocols/mqtt/...",
			"wharf/protocols/amqp/...", "wharf/protocols/transport/...", "wharf/protocols/http/...",
		},
	},
	{
		// wharf conform runs against any broker, so its cases must see a
		// broker only through the wire: the project's OpenWire client is
		// the one Wharf package it may use (issue 21).
		name: "conform is a client: it depends on no engine, store, security, cluster or command package",
		from: []string{"wharf/conform/..."},
		deny: []string{"wharf/engine/...", "wharf/storage/...", "wharf/security/...", "wharf/cluster/...", "wharf/cmd/...", "wharf/bench/..."},
	},
	{
		name: "security depends on no protocol or store package",
		from: []string{"wharf/security/..."},
		deny: []string{"wharf/protocols/...", "wharf/storage/..."},
	},
}

// pkg is what go list -deps -json says of one package.
type pkg struct {
	ImportPath string
	Standard   bool
	Imports    []string
	Deps       []string
}

func TestLayering(t *testing.T) {
	pkgs := goList(t)
	for _, v := range check(pkgs, rules) {
		t.Error(v)
	}
}

// goList runs go list -deps -json over the module.
func goList(t *testing.T) []pkg {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(gobin, "list", "-deps", "-json=ImportPath,Standard,Imports,Deps", "./...")
	cmd.Dir = filepath.Join("..", "..") // the module root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []pkg
	for d := json.NewDecoder(bytes.NewReader(out)); ; {
		var p pkg
		if err := d.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list listed no packages")
	}
	return pkgs
}

// check returns one line per dependency that breaks a rule, with the chain
// of imports that leads to it, and one per rule that matches no package
// (a rule a rename has silently switched off). Of a chain only the first
// forbidden package is reported, and only for the last package on it that
// the rule covers: storage/kahadb -> protocols/openwire -> gnet is one line,
// not one per package of gnet.
func check(pkgs []pkg, rules []rule) []string {
	byPath := make(map[string]*pkg, len(pkgs))
	for i := range pkgs {
		byPath[pkgs[i].ImportPath] = &pkgs[i]
	}
	var out []string
	for _, r := range rules {
		bad := func(d string) bool {
			if dp := byPath[d]; dp != nil && dp.Standard {
				return false
			}
			return matchAny(r.deny, d) || (r.allow != nil && !matchAny(r.allow, d) && !matchAny(r.from, d))
		}
		matched := false
		for _, p := range pkgs {
			if p.Standard || !matchAny(r.from, p.ImportPath) {
				continue
			}
			matched = true
			for _, d := range p.Deps {
				if !bad(d) {
					continue
				}
				c := chain(byPath, p.ImportPath, d)
				if slices.ContainsFunc(c[1:len(c)-1], func(x string) bool { return bad(x) || matchAny(r.from, x) || matchAny(r.opaque, x) }) {
					continue // reported at x
				}
				out = append(out, r.name+": "+strings.Join(c, " -> "))
			}
		}
		if !matched {
			out = append(out, r.name+": no package matches "+strings.Join(r.from, ", "))
		}
	}
	return out
}

// chain is the shortest path of imports from one package to another.
func chain(byPath map[string]*pkg, from, to string) []string {
	prev := map[string]string{from: ""}
	for queue := []string{from}; len(queue) > 0; queue = queue[1:] {
		p := byPath[queue[0]]
		if p == nil {
			continue
		}
		for _, i := range p.Imports {
			if _, seen := prev[i]; seen {
				continue
			}
			prev[i] = p.ImportPath
			if i == to {
				var c []string
				for x := to; x != ""; x = prev[x] {
					c = append(c, x)
				}
				slices.Reverse(c)
				return c
			}
			queue = append(queue, i)
		}
	}
	return []string{from, "...", to}
}

func matchAny(patterns []string, p string) bool {
	for _, pat := range patterns {
		if match(pat, p) {
			return true
		}
	}
	return false
}

func match(pattern, p string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == prefix || strings.HasPrefix(p, prefix+"/")
	}
	ok, _ := path.Match(pattern, p)
	return ok
}

// TestLayeringCheckerFails shows that the checker reports each kind of
// violation, on a made-up module.
func TestLayeringCheckerFails(t *testing.T) {
	std := func(p string) pkg { return pkg{ImportPath: p, Standard: true} }
	pkgs := []pkg{
		std("fmt"), std("net"),
		{ImportPath: "example.com/thirdparty"},
		{ImportPath: "wharf/protocols/transport", Imports: []string{"net", "example.com/thirdparty"}, Deps: []string{"example.com/thirdparty", "net"}},
		{ImportPath: "wharf/protocols/openwire/wire", Imports: []string{"fmt"}, Deps: []string{"fmt"}},
		{ImportPath: "wharf/protocols/stomp/wire", Imports: []string{"example.com/thirdparty"}, Deps: []string{"example.com/thirdparty"}},
		{ImportPath: "wharf/protocols/transport/ws/wire", Imports: []string{"fmt"}, Deps: []string{"fmt"}},
		{ImportPath: "wharf/engine/message", Imports: []string{"fmt"}, Deps: []string{"fmt"}},
		{ImportPath: "wharf/protocols/openwire/marshal", Imports: []string{"wharf/engine/message", "wharf/protocols/openwire/wire"},
			Deps: []string{"fmt", "wharf/engine/message", "wharf/protocols/openwire/wire"}},
		{ImportPath: "wharf/protocols/openwire", Imports: []string{"wharf/protocols/openwire/marshal", "wharf/protocols/transport"},
			Deps: []string{"example.com/thirdparty", "fmt", "net", "wharf/engine/message", "wharf/protocols/openwire/marshal", "wharf/protocols/openwire/wire", "wharf/protocols/transport"}},
		// The dependency this test exists for: a store on the session adapter.
		{ImportPath: "wharf/storage/kahadb", Imports: []string{"wharf/protocols/openwire"},
			Deps: []string{"example.com/thirdparty", "fmt", "net", "wharf/engine/message", "wharf/protocols/openwire", "wharf/protocols/openwire/marshal", "wharf/protocols/openwire/wire", "wharf/protocols/transport"}},
		{ImportPath: "wharf/storage/memory", Imports: []string{"wharf/protocols/openwire/marshal"},
			Deps: []string{"fmt", "wharf/engine/message", "wharf/protocols/openwire/marshal", "wharf/protocols/openwire/wire"}},
		{ImportPath: "wharf/engine", Imports: []string{"wharf/storage/memory"},
			Deps: []string{"fmt", "wharf/engine/message", "wharf/protocols/openwire/marshal", "wharf/protocols/openwire/wire", "wharf/storage/memory"}},
		{ImportPath: "wharf/security", Imports: []string{"wharf/engine"},
			Deps: []string{"fmt", "wharf/engine", "wharf/engine/message", "wharf/protocols/openwire/marshal", "wharf/protocols/openwire/wire", "wharf/storage/memory"}},
		// A bridge on the server session rather than the client.
		{ImportPath: "wharf/cluster", Imports: []string{"wharf/protocols/openwire"},
			Deps: []string{"example.com/thirdparty", "fmt", "net", "wharf/engine/message", "wharf/protocols/openwire", "wharf/protocols/openwire/marshal", "wharf/protocols/openwire/wire", "wharf/protocols/transport"}},
		// A conformance case that peeks at the engine instead of the wire.
		{ImportPath: "wharf/conform", Imports: []string{"wharf/engine/message", "wharf/protocols/openwire/wire"},
			Deps: []string{"fmt", "wharf/engine/message", "wharf/protocols/openwire/wire"}},
	}
	got := check(pkgs, rules)
	want := []string{
		"storage depends only on the standard library, engine, the OpenWire codec and stored form, and the named third-party modules: wharf/storage/kahadb -> wharf/protocols/openwire",
		"wire packages depend only on the standard library: wharf/protocols/stomp/wire -> example.com/thirdparty",
		"the engine depends on no protocol, store, security, bench or command package: wharf/engine -> wharf/storage/memory",
		"cluster depends on the engine and the OpenWire client, codec and stored form only: wharf/cluster -> wharf/protocols/openwire",
		"conform is a client: it depends on no engine, store, security, cluster or command package: wharf/conform -> wharf/engine/message",
		"security depends on no protocol or store package: wharf/security -> wharf/engine -> wharf/storage/memory",
	}
	if !slices.Equal(got, want) {
		t.Errorf("check reported\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}

	// A rule whose packages are gone is reported, not passed.
	if got := check(pkgs[:2], rules[:1]); len(got) != 1 || !strings.Contains(got[0], "no package matches wharf/storage/...") {
		t.Errorf("rule matching nothing: got %q", got)
	}
	// The real rules over a clean module: nothing to report.
	clean := slices.DeleteFunc(slices.Clone(pkgs), func(p pkg) bool {
		return p.ImportPath == "wharf/storage/kahadb" || p.ImportPath == "wharf/protocols/stomp/wire" ||
			p.ImportPath == "wharf/engine" || p.ImportPath == "wharf/security" || p.ImportPath == "wharf/cluster" ||
			p.ImportPath == "wharf/conform"
	})
	clean = append(clean,
		pkg{ImportPath: "wharf/engine", Imports: []string{"wharf/engine/message"}, Deps: []string{"fmt", "wharf/engine/message"}},
		pkg{ImportPath: "wharf/security", Imports: []string{"wharf/engine"}, Deps: []string{"fmt", "wharf/engine", "wharf/engine/message"}},
		pkg{ImportPath: "wharf/cluster", Imports: []string{"wharf/engine", "wharf/protocols/openwire/marshal"},
			Deps: []string{"fmt", "wharf/engine", "wharf/engine/message", "wharf/protocols/openwire/marshal", "wharf/protocols/openwire/wire"}},
		pkg{ImportPath: "wharf/conform", Imports: []string{"wharf/protocols/openwire/wire"}, Deps: []string{"fmt", "wharf/protocols/openwire/wire"}})
	if got := check(clean, rules); len(got) != 0 {
		t.Errorf("clean module: got %q", got)
	}
}
