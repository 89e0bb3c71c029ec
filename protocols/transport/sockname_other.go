//go:build !unix

package transport

import (
	"errors"
	"net"
	"net/netip"
)

// socketAddr is not implemented off Unix; callers fall back to gnet's view.
func socketAddr(int) net.Addr { return nil }

// socketAddrPort is not implemented off Unix; callers fall back to gnet's
// view.
func socketAddrPort(int) netip.AddrPort { return netip.AddrPort{} }

// listenerAddr is not implemented off Unix; callers fall back to the
// resolved configured address.
func listenerAddr(int) net.Addr { return nil }

// shutdownWrite is not implemented off Unix: Close closes at once.
func shutdownWrite(int) error { return errors.ErrUnsupported }
