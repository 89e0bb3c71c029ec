//go:build unix

package transport

import (
	"net"
	"net/netip"
	"syscall"
)

// socketAddr returns the local address bound to fd (getsockname), or nil.
// gnet reports the listener's configured address as every connection's local
// address, which says port 0 when the listener was bound to port 0; the
// kernel knows the real one.
func socketAddr(fd int) net.Addr {
	ap := socketAddrPort(fd)
	if !ap.IsValid() {
		return nil
	}
	return net.TCPAddrFromAddrPort(ap)
}

// socketAddrPort is socketAddr as a value, the zero AddrPort when unknown:
// what a connection keeps (no allocation; issue 18).
func socketAddrPort(fd int) netip.AddrPort {
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		return netip.AddrPort{}
	}
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *syscall.SockaddrInet6:
		ip := netip.AddrFrom16(a.Addr)
		if a.ZoneId != 0 {
			if ifi, err := net.InterfaceByIndex(int(a.ZoneId)); err == nil {
				ip = ip.WithZone(ifi.Name)
			}
		}
		return netip.AddrPortFrom(ip, uint16(a.Port))
	}
	return netip.AddrPort{}
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
