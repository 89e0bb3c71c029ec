//go:build !unix

package transport

import (
	"errors"
	"net"
)

// socketAddr is not implemented off Unix; callers fall back to gnet's view.
func socketAddr(int) net.Addr { return nil }

// listenerAddr is not implemented off Unix; callers fall back to the
// resolved configured address.
func listenerAddr(int) net.Addr { return nil }

// shutdownWrite is not implemented off Unix: Close closes at once.
func shutdownWrite(int) error { return errors.ErrUnsupported }
