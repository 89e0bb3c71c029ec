package security

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"wharf/engine"
	"wharf/engine/config"
	"wharf/engine/message"
)

// The principal classes an authorization entry's groupClass may name.
const (
	groupPrincipalClass = "org.apache.activemq.jaas.GroupPrincipal"
	userPrincipalClass  = "org.apache.activemq.jaas.UserPrincipal"
)

// maxACLCache bounds the (destination, action) -> ACL cache; when full it
// is emptied and refilled (destination names come from clients).
const maxACLCache = 8192

// acl is one computed set of allowed principals: ActiveMQ's
// WildcardAwareSet of GroupPrincipal/UserPrincipal objects.
type acl struct {
	// wildcard is the group "*": DefaultAuthorizationMap's match-all
	// principal, equal to any principal. A subject with no principal at
	// all (a simple user with no groups) still matches nothing, as
	// SecurityContext.isInOneOf compares principal by principal.
	wildcard bool
	groups   map[string]struct{}
	users    map[string]struct{}
}

// allows is SecurityContext.isInOneOf. No allocation.
func (a *acl) allows(s *engine.Subject) bool {
	if a.wildcard {
		return len(s.Groups) > 0 || len(s.UserPrincipals) > 0
	}
	for _, g := range s.Groups {
		if _, ok := a.groups[g]; ok {
			return true
		}
	}
	for _, u := range s.UserPrincipals {
		if _, ok := a.users[u]; ok {
			return true
		}
	}
	return false
}

func (a *acl) add(o *acl) {
	a.wildcard = a.wildcard || o.wildcard
	for g := range o.groups {
		a.groups[g] = struct{}{}
	}
	for u := range o.users {
		a.users[u] = struct{}{}
	}
}

func newACL() *acl { return &acl{groups: map[string]struct{}{}, users: map[string]struct{}{}} }

// authEntry is an AuthorizationEntry with its ACLs per action.
type authEntry struct {
	dest message.Destination
	acls [3]*acl // by engine.Action
	line int
}

// mapNode is a DestinationMapNode: one path element of the entries'
// destination patterns.
type mapNode struct {
	children map[string]*mapNode
	values   []*authEntry
}

func (n *mapNode) child(p string) *mapNode {
	if n.children == nil {
		n.children = map[string]*mapNode{}
	}
	c := n.children[p]
	if c == nil {
		c = &mapNode{}
		n.children[p] = c
	}
	return c
}

// authzMap is DefaultAuthorizationMap (as XBeanAuthorizationMap builds it
// from activemq.xml). It is immutable once built; decisions are cached.
//
// What ActiveMQ 5.17 does, and so Wharf:
//   - The ACL for a destination is the UNION of the ACLs of EVERY entry whose
//     pattern matches it (DestinationMap.get -> findWildcardMatches, then
//     getReadACLs/getWriteACLs/getAdminACLs add each entry's set), plus the
//     defaultEntry's whenever there is one (getAllEntries adds it whether or
//     not another entry matched). It is NOT the most specific entry:
//     getEntryFor/chooseValue exist but AuthorizationBroker never calls them.
//     With queue "orders.>" read=consumers and queue ">" read=admins, both
//     consumers and admins may read orders.in.
//   - No matching entry and no defaultEntry: the set is empty and the
//     operation is refused.
//   - Temporary destinations use tempDestinationAuthorizationEntry alone;
//     without one every temporary destination operation is allowed
//     (AuthorizationBroker treats the null set as "no restriction").
//   - A composite destination's entries are those matching EVERY element
//     (DefaultAuthorizationMap.get's union() keeps the entries common to
//     all), plus the defaultEntry.
//   - "everyone" is not special: it is a group like any other, which a
//     subject must have (users.properties/groups.properties or the simple
//     plugin's groups list it). The group "*" is the wildcard.
//   - groupClass: entries (and the temp entry) without their own take the
//     map's; the defaultEntry does not (XBeanAuthorizationMap applies the
//     map's class only to authorizationEntries and the temp entry). Group
//     names become GroupPrincipals, which match the subject's groups, or
//     UserPrincipals, which match JAAS user principals (never simple
//     plugin users, whose subjects hold groups only).
type authzMap struct {
	roots [4]mapNode // by message.DestType
	def   *authEntry
	temp  *authEntry

	// The decision cache is sync.Map's scheme with a typed key (an any
	// key would allocate on every lookup): read is an immutable map
	// loaded lock-free; misses go to dirty (a superset of read) under
	// mu, and dirty replaces read once there have been as many misses
	// as it has entries, so copying is amortised O(1) per miss.
	read   atomic.Pointer[map[aclKey]*acl]
	mu     sync.Mutex // guards dirty and misses
	dirty  map[aclKey]*acl
	misses int
}

type aclKey struct {
	dest   message.Destination
	action engine.Action
}

func newAuthzMap(m *config.AuthorizationMap) (*authzMap, error) {
	am := &authzMap{}
	am.read.Store(&map[aclKey]*acl{})
	mapClass := m.GroupClass
	var errs []error
	for _, e := range m.Entries {
		class := e.GroupClass
		if class == "" {
			class = mapClass
		}
		ae, err := newAuthEntry(e, class)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, el := range e.Destination.Elements() {
			n := &am.roots[el.Type]
			for _, p := range strings.Split(el.Name, ".") {
				n = n.child(p)
			}
			n.values = append(n.values, ae)
		}
	}
	if m.Default != nil {
		ae, err := newAuthEntry(*m.Default, m.Default.GroupClass)
		if err != nil {
			errs = append(errs, err)
		}
		am.def = ae
	}
	if m.Temp != nil {
		class := m.Temp.GroupClass
		if class == "" {
			class = mapClass
		}
		ae, err := newAuthEntry(*m.Temp, class)
		if err != nil {
			errs = append(errs, err)
		}
		am.temp = ae
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return am, nil
}

func newAuthEntry(e config.AuthorizationEntry, class string) (*authEntry, error) {
	if class == "" {
		class = groupPrincipalClass
	}
	ae := &authEntry{dest: e.Destination, line: e.Line}
	for i, names := range [3][]string{e.Read, e.Write, e.Admin} {
		a := newACL()
		for _, n := range names {
			switch {
			case n == "*":
				a.wildcard = true
			case class == groupPrincipalClass:
				a.groups[n] = struct{}{}
			case class == userPrincipalClass:
				a.users[n] = struct{}{}
			default:
				return nil, fmt.Errorf("authorizationEntry at line %d: %w %q (supported: %s, %s)", e.Line, ErrUnsupportedGroupClass, class, groupPrincipalClass, userPrincipalClass)
			}
		}
		ae.acls[i] = a
	}
	return ae, nil
}

// aclFor is the allowed set for action on d, nil for "no restriction"
// (a temporary destination without tempDestinationAuthorizationEntry).
// Safe from any goroutine; a cache hit takes no lock and allocates
// nothing.
func (am *authzMap) aclFor(a engine.Action, d message.Destination) *acl {
	if d.Type.IsTemp() && !d.IsComposite() {
		if am.temp == nil {
			return nil
		}
		return am.temp.acls[a]
	}
	k := aclKey{dest: d, action: a}
	if got, ok := (*am.read.Load())[k]; ok {
		return got
	}
	am.mu.Lock()
	defer am.mu.Unlock()
	read := *am.read.Load()
	if got, ok := read[k]; ok {
		return got
	}
	if am.dirty == nil {
		am.dirty = make(map[aclKey]*acl, len(read)+1)
		for kk, v := range read {
			am.dirty[kk] = v
		}
	}
	got, ok := am.dirty[k]
	if !ok {
		if len(am.dirty) >= maxACLCache {
			// Bounded: start again rather than grow with client-chosen
			// names.
			am.dirty = map[aclKey]*acl{}
			am.read.Store(&map[aclKey]*acl{})
			am.misses = 0
		}
		got = am.compute(a, d)
		am.dirty[k] = got
	}
	am.misses++
	if am.misses >= len(am.dirty) {
		m := am.dirty
		am.read.Store(&m)
		am.dirty, am.misses = nil, 0
	}
	return got
}

func (am *authzMap) compute(a engine.Action, d message.Destination) *acl {
	entries := am.entries(d)
	if am.def != nil {
		entries[am.def] = struct{}{}
	}
	out := newACL()
	for e := range entries {
		out.add(e.acls[a])
	}
	return out
}

// entries is DefaultAuthorizationMap.get: for a composite, the entries
// matching every element; else the entries matching the destination.
func (am *authzMap) entries(d message.Destination) map[*authEntry]struct{} {
	if d.IsComposite() {
		var answer map[*authEntry]struct{}
		for _, el := range d.Elements() {
			got := am.entries(el)
			if answer == nil {
				answer = got
			} else {
				for e := range answer {
					if _, ok := got[e]; !ok {
						delete(answer, e)
					}
				}
			}
			if len(answer) == 0 {
				break
			}
		}
		if answer == nil {
			answer = map[*authEntry]struct{}{}
		}
		return answer
	}
	answer := map[*authEntry]struct{}{}
	appendMatching(answer, []*mapNode{&am.roots[d.Type]}, strings.Split(d.Name, "."), 0, false)
	return answer
}

// appendMatching is DestinationMapNode.appendMatchingValues over a set of
// nodes (a set stands for AnyChildDestinationNode, what a "*" in the
// looked-up name walks into). With deep false, as
// DefaultAuthorizationMap.get asks, a ">" in the looked-up name (a
// wildcard subscription) is an ordinary element except that entries under
// wildcards still match it.
func appendMatching(answer map[*authEntry]struct{}, nodes []*mapNode, paths []string, start int, deep bool) {
	couldMatchAny := true
	for i := start; i < len(paths) && len(nodes) > 0; i++ {
		p := paths[i]
		if deep && p == ">" {
			for _, n := range nodes {
				addDescendants(answer, n)
			}
			// The nodes' own values are still added below, as
			// Java's loop leaves node set when it breaks here.
			couldMatchAny = false
			break
		}
		for _, n := range nodes {
			appendMatchingWildcards(answer, n, paths, i)
		}
		var next []*mapNode
		for _, n := range nodes {
			if p == "*" {
				for _, c := range n.children {
					next = append(next, c)
				}
			} else if c := n.children[p]; c != nil {
				next = append(next, c)
			}
		}
		nodes = next
	}
	for _, n := range nodes {
		addValues(answer, n)
		if couldMatchAny {
			// "FOO.BAR" matches the entry "FOO.BAR.>".
			if c := n.children[">"]; c != nil {
				addValues(answer, c)
			}
		}
	}
}

func appendMatchingWildcards(answer map[*authEntry]struct{}, n *mapNode, paths []string, idx int) {
	if c := n.children["*"]; c != nil {
		appendMatching(answer, []*mapNode{c}, paths, idx+1, true)
	}
	if c := n.children[">"]; c != nil {
		addValues(answer, c)
		addDescendants(answer, c)
	}
}

func addValues(answer map[*authEntry]struct{}, n *mapNode) {
	for _, v := range n.values {
		answer[v] = struct{}{}
	}
}

func addDescendants(answer map[*authEntry]struct{}, n *mapNode) {
	for _, c := range n.children {
		addValues(answer, c)
		addDescendants(answer, c)
	}
}
