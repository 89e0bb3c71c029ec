//go:build linux && !poll_opt

package transport

import (
	"fmt"
	"reflect"
	"syscall"
	"unsafe"

	"github.com/panjf2000/gnet/v2"
)

// gnet keeps each event loop's epoll descriptor in an unexported field
// (eventloop.poller.fd, pkg/netpoll's default Poller) and offers no way to
// change a connection's interest set. pollerFD reads that field by
// reflection, checking every type on the way, so that a gnet whose layout
// differs from v2.9.7's is detected (and PauseReading falls back to holding
// input, see pause.go) instead of misread.
//
// The poll_opt build of gnet stores a pointer in epoll's event data instead
// of the descriptor; this file is left out of such builds (see the build
// constraint), since an interest set written here would carry the wrong data.
const (
	// readStopBuilt says this build means to stop a paused socket's reads;
	// the tests fail, rather than skip, when pollerFD then fails (a gnet
	// upgrade changed what pollerFD reads).
	readStopBuilt = true

	gnetPkg    = "github.com/panjf2000/gnet/v2"
	netpollPkg = "github.com/panjf2000/gnet/v2/pkg/netpoll"
)

// pollerFD returns the epoll descriptor of the gnet event loop el.
func pollerFD(el gnet.EventLoop) (int, error) {
	v := reflect.ValueOf(el)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return -1, fmt.Errorf("gnet event loop is %T, want *gnet.eventloop: %w", el, errReadCtlUnsupported)
	}
	v = v.Elem()
	if t := v.Type(); t.PkgPath() != gnetPkg || t.Name() != "eventloop" {
		return -1, fmt.Errorf("gnet event loop is %s.%s: %w", t.PkgPath(), t.Name(), errReadCtlUnsupported)
	}
	p := v.FieldByName("poller")
	if !p.IsValid() || p.Kind() != reflect.Pointer || p.IsNil() || p.Elem().Kind() != reflect.Struct {
		return -1, fmt.Errorf("gnet event loop has no poller: %w", errReadCtlUnsupported)
	}
	p = p.Elem()
	if t := p.Type(); t.PkgPath() != netpollPkg || t.Name() != "Poller" {
		return -1, fmt.Errorf("gnet poller is %s.%s: %w", t.PkgPath(), t.Name(), errReadCtlUnsupported)
	}
	// efd (the wake-up eventfd) exists only in the default epoll poller,
	// the one that puts the descriptor in the event data as we do.
	fd, efd := p.FieldByName("fd"), p.FieldByName("efd")
	if !fd.IsValid() || fd.Kind() != reflect.Int || !efd.IsValid() || efd.Kind() != reflect.Int {
		return -1, fmt.Errorf("gnet poller is not the default epoll poller: %w", errReadCtlUnsupported)
	}
	return int(fd.Int()), nil
}

// setInterest sets the epoll events watched for fd to what gnet's
// level-triggered poller would set (EPOLLIN|EPOLLPRI, plus EPOLLOUT when
// write is true) or, when read is false, to EPOLLOUT or nothing. EPOLLERR
// and EPOLLHUP are reported whatever the set, so a reset peer still closes
// the connection. The event data is the descriptor, as gnet's default
// poller stores it.
func setInterest(epfd, fd int, read, write bool) error {
	var ev uint32
	if read {
		ev |= syscall.EPOLLIN | syscall.EPOLLPRI
	}
	if write {
		ev |= syscall.EPOLLOUT
	}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_MOD, fd, &syscall.EpollEvent{Events: ev, Fd: int32(fd)}); err != nil {
		return fmt.Errorf("epoll_ctl mod fd %d: %w", fd, err)
	}
	return nil
}

// unreadBytes is the input the kernel holds for socket fd (SIOCINQ), or 0
// if it cannot say.
func unreadBytes(fd int) int {
	var n int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); errno != 0 {
		return 0
	}
	return int(n)
}
