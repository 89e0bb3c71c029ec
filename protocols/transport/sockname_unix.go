//go:build unix

package transport

import (
	"net"
	"slices"
	"syscall"
)

// socketAddr returns the local address bound to fd (getsockname), or nil.
// gnet reports the listener's configured address as every connection's local
// address, which says port 0 when the listener was bound to port 0; the
// kernel knows the real one.
func socketAddr(fd int) net.Addr {
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		return nil
	}
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return &net.TCPAddr{IP: slices.Clone(a.Addr[:]), Port: a.Port}
	case *syscall.SockaddrInet6:
		addr := &net.TCPAddr{IP: slices.Clone(a.Addr[:]), Port: a.Port}
		if a.ZoneId != 0 {
			if ifi, err := net.InterfaceByIndex(int(a.ZoneId)); err == nil {
				addr.Zone = ifi.Name
			}
		}
		return addr
	}
	return nil
}

// listenerAddr returns the address the listening socket fd is bound to and
// closes fd (a duplicate made for the purpose).
func listenerAddr(fd int) net.Addr {
	defer syscall.Close(fd) //nolint:errcheck // a dup'ed descriptor; nothing to do on failure
	return socketAddr(fd)
}

// shutdownWrite half-closes socket fd: the kernel sends FIN after the
// bytes it holds, and reading goes on.
func shutdownWrite(fd int) error { return syscall.Shutdown(fd, syscall.SHUT_WR) }
