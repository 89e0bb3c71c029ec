package mqtt

import "errors"

// Sentinel errors of the MQTT adapter.
var (
	ErrBadOption      = errors.New("mqtt: invalid transport option")
	ErrKeepAlive      = errors.New("mqtt: nothing received within 1.5 times the keep-alive")
	ErrConnectTimeout = errors.New("mqtt: no CONNECT within the connect timeout")
	ErrTakenOver      = errors.New("mqtt: session taken over by a new connection with the same client id")
)
