//go:build !unix

package transport

import "net"

// socketAddr is not implemented off Unix; callers fall back to gnet's view.
func socketAddr(int) net.Addr { return nil }

// listenerAddr is not implemented off Unix; callers fall back to the
// resolved configured address.
func listenerAddr(int) net.Addr { return nil }
