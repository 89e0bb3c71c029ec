package wire

import (
	"fmt"
	"math"
	"time"
)

// Magic is the WireFormatInfo magic, "ActiveMQ".
var Magic = [8]byte{'A', 'c', 't', 'i', 'v', 'e', 'M', 'Q'}

// maxWireFormatProperties is WireFormatInfo.MAX_PROPERTY_SIZE.
const maxWireFormatProperties = 4096

// maxEncodeDepth bounds recursion when encoding caller-built maps and lists.
const maxEncodeDepth = 64

// WireFormatInfo (type 1) is the first frame each side sends; it is not a
// BaseCommand. Its options travel as a primitive map in
// MarshalledProperties, kept as received so a decode -> encode round trip
// is byte-identical; use Options to read them.
type WireFormatInfo struct {
	Magic                [8]byte
	Version              int32
	MarshalledProperties []byte
}

// DataStructureType implements DataStructure.
func (*WireFormatInfo) DataStructureType() byte { return TypeWireFormatInfo }

func (w *WireFormatInfo) marshal(c *codec) {
	c.raw8("Magic", &w.Magic)
	c.int32("Version", &w.Version)
	c.bytes("MarshalledProperties", &w.MarshalledProperties)
}

// Options are the settings a WireFormatInfo advertises (reference §3.3).
// Unset booleans read as false and unset numbers as 0, as the Java getters.
type Options struct {
	Version                          int
	StackTraceEnabled                bool
	TcpNoDelayEnabled                bool
	CacheEnabled                     bool
	CacheSize                        int32 // slots
	TightEncodingEnabled             bool
	SizePrefixDisabled               bool
	MaxInactivityDuration            time.Duration // sent as long ms
	MaxInactivityDurationInitalDelay time.Duration // sent as long ms (sic)
	MaxFrameSize                     int64         // bytes
	// MaxFrameSizeEnabled is advertised but not negotiated.
	MaxFrameSizeEnabled bool
	Host                string
	ProviderName        string
	ProviderVersion     string
	PlatformDetails     string
}

// DefaultOptions returns the options a 5.17 Java client or broker
// advertises (OpenWireFormatFactory defaults).
func DefaultOptions() Options {
	return Options{
		Version:                          MaxVersion,
		StackTraceEnabled:                true,
		TcpNoDelayEnabled:                true,
		CacheEnabled:                     true,
		CacheSize:                        1024,
		TightEncodingEnabled:             true,
		MaxInactivityDuration:            30 * time.Second,
		MaxInactivityDurationInitalDelay: 10 * time.Second,
		MaxFrameSize:                     math.MaxInt64,
		MaxFrameSizeEnabled:              true,
		ProviderName:                     "ActiveMQ",
		ProviderVersion:                  "5.17.2",
		PlatformDetails:                  "Go",
	}
}

// NewWireFormatInfo builds a WireFormatInfo advertising o. Properties are
// written with the value types Java casts them to: booleans tag 1,
// CacheSize tag 5, durations and MaxFrameSize tag 6, strings tag 9.
func NewWireFormatInfo(o Options) (*WireFormatInfo, error) {
	props := map[string]any{
		"StackTraceEnabled":                o.StackTraceEnabled,
		"TcpNoDelayEnabled":                o.TcpNoDelayEnabled,
		"CacheEnabled":                     o.CacheEnabled,
		"CacheSize":                        o.CacheSize,
		"TightEncodingEnabled":             o.TightEncodingEnabled,
		"SizePrefixDisabled":               o.SizePrefixDisabled,
		"MaxInactivityDuration":            o.MaxInactivityDuration.Milliseconds(),
		"MaxInactivityDurationInitalDelay": o.MaxInactivityDurationInitalDelay.Milliseconds(),
		"MaxFrameSize":                     o.MaxFrameSize,
		"MaxFrameSizeEnabled":              o.MaxFrameSizeEnabled,
	}
	for k, v := range map[string]string{"Host": o.Host, "ProviderName": o.ProviderName,
		"ProviderVersion": o.ProviderVersion, "PlatformDetails": o.PlatformDetails} {
		if v != "" {
			props[k] = v
		}
	}
	b, err := AppendPrimitiveMap(nil, props)
	if err != nil {
		return nil, fmt.Errorf("WireFormatInfo properties: %w", err)
	}
	return &WireFormatInfo{Magic: Magic, Version: int32(o.Version), MarshalledProperties: b}, nil
}

// Valid reports whether the magic is "ActiveMQ".
func (w *WireFormatInfo) Valid() bool { return w.Magic == Magic }

// Properties decodes MarshalledProperties (at most 4096 entries, as Java).
func (w *WireFormatInfo) Properties() (map[string]any, error) {
	if w.MarshalledProperties == nil {
		return map[string]any{}, nil
	}
	lim := DefaultLimits()
	lim.MaxMapEntries = maxWireFormatProperties
	m, err := UnmarshalPrimitiveMap(w.MarshalledProperties, lim)
	if err != nil {
		return nil, fmt.Errorf("WireFormatInfo properties: %w", err)
	}
	return m, nil
}

// Options decodes the advertised options. A property of the wrong type reads
// as unset, like Java's `Boolean.TRUE == getProperty(...)`.
func (w *WireFormatInfo) Options() (Options, error) {
	if !w.Valid() {
		return Options{}, ErrBadMagic
	}
	p, err := w.Properties()
	if err != nil {
		return Options{}, err
	}
	b := func(k string) bool { v, _ := p[k].(bool); return v }
	l := func(k string) int64 { v, _ := p[k].(int64); return v }
	s := func(k string) string { v, _ := p[k].(string); return v }
	cs, _ := p["CacheSize"].(int32)
	return Options{
		Version:                          int(w.Version),
		StackTraceEnabled:                b("StackTraceEnabled"),
		TcpNoDelayEnabled:                b("TcpNoDelayEnabled"),
		CacheEnabled:                     b("CacheEnabled"),
		CacheSize:                        cs,
		TightEncodingEnabled:             b("TightEncodingEnabled"),
		SizePrefixDisabled:               b("SizePrefixDisabled"),
		MaxInactivityDuration:            msDuration(l("MaxInactivityDuration")),
		MaxInactivityDurationInitalDelay: msDuration(l("MaxInactivityDurationInitalDelay")),
		MaxFrameSize:                     l("MaxFrameSize"),
		MaxFrameSizeEnabled:              b("MaxFrameSizeEnabled"),
		Host:                             s("Host"),
		ProviderName:                     s("ProviderName"),
		ProviderVersion:                  s("ProviderVersion"),
		PlatformDetails:                  s("PlatformDetails"),
	}, nil
}

func msDuration(ms int64) time.Duration {
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return math.MaxInt64
	}
	if ms < math.MinInt64/int64(time.Millisecond) {
		return math.MinInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// Format is the encoding in force on one connection. Encoder and Decoder
// both take it; switch both after the WireFormatInfo exchange.
type Format struct {
	Version              int
	TightEncodingEnabled bool
	CacheEnabled         bool
	// CacheSize is the number of cache slots; 0 means 16383.
	CacheSize          int
	StackTraceEnabled  bool
	SizePrefixDisabled bool
	TcpNoDelayEnabled  bool
	// MaxFrameSize is in bytes; <= 0 means no negotiated limit (the
	// configured Limits.MaxFrameSize still applies).
	MaxFrameSize int64
	// MaxInactivityDuration and MaxInactivityDurationInitalDelay drive the
	// inactivity monitor; 0 disables it.
	MaxInactivityDuration            time.Duration
	MaxInactivityDurationInitalDelay time.Duration
}

// InitialFormat is the format of the first frame in each direction: loose,
// uncached and size-prefixed, whatever either side prefers (an
// un-negotiated OpenWireFormat). The version only matters for
// WireFormatInfo, whose layout never changed.
func InitialFormat(version int) Format {
	return Format{Version: version}
}

// StoreFormat is the format KahaDB marshals messages with: version 11,
// loose, uncached, size-prefixed (KahaDBStore's `new OpenWireFormat()`).
func StoreFormat() Format {
	return Format{Version: StoreVersion}
}

// javaMin is OpenWireFormat.min: the smaller value, ignoring values <= 0.
func javaMin(a, b int64) int64 {
	if a < b && a > 0 || b <= 0 {
		return a
	}
	return b
}

// Negotiate computes the format both sides switch to after exchanging
// WireFormatInfo, as OpenWireFormat.renegotiateWireFormat (local is this
// side's preferred info) and the inactivity monitor do: the lower version
// and MaxFrameSize (ignoring values <= 0); stack traces, TCP_NODELAY, cache
// and tight encoding only if both ask; the prefix disabled only if both ask;
// the smaller CacheSize; the smaller inactivity durations.
func Negotiate(local, remote Options) (Format, error) {
	v := int(javaMin(int64(local.Version), int64(remote.Version)))
	if v < MinVersion || v > MaxVersion {
		return Format{}, fmt.Errorf("%w: %d", ErrUnsupportedVersion, v)
	}
	f := Format{
		Version:                          v,
		MaxFrameSize:                     javaMin(local.MaxFrameSize, remote.MaxFrameSize),
		StackTraceEnabled:                local.StackTraceEnabled && remote.StackTraceEnabled,
		TcpNoDelayEnabled:                local.TcpNoDelayEnabled && remote.TcpNoDelayEnabled,
		CacheEnabled:                     local.CacheEnabled && remote.CacheEnabled,
		TightEncodingEnabled:             local.TightEncodingEnabled && remote.TightEncodingEnabled,
		SizePrefixDisabled:               local.SizePrefixDisabled && remote.SizePrefixDisabled,
		MaxInactivityDuration:            min(local.MaxInactivityDuration, remote.MaxInactivityDuration),
		MaxInactivityDurationInitalDelay: min(local.MaxInactivityDurationInitalDelay, remote.MaxInactivityDurationInitalDelay),
	}
	if f.CacheEnabled {
		// Plain Math.min; 0 selects the default size.
		f.CacheSize = cacheSlots(int(min(local.CacheSize, remote.CacheSize)))
	}
	return f, nil
}

// Limits bound what a Decoder accepts; every length and count read from the
// wire is checked against them (or against the bytes left in the frame)
// before anything is allocated.
type Limits struct {
	// MaxFrameSize in bytes applies on top of the negotiated MaxFrameSize.
	MaxFrameSize int64
	// MaxNestingDepth bounds nested objects, throwable causes and nested
	// primitive maps/lists.
	MaxNestingDepth int
	// MaxArrayLength bounds object arrays and stack traces (elements).
	MaxArrayLength int
	// MaxMapEntries bounds primitive maps and lists (entries).
	MaxMapEntries int
	// MaxBodySize bounds decompressed and decoded bodies (bytes).
	MaxBodySize int64
}

// DefaultLimits returns the limits used when a field is zero. The frame
// limit is the stock activemq.xml wireFormat.maxFrameSize (100 MiB).
func DefaultLimits() Limits {
	return Limits{
		MaxFrameSize:    104857600,
		MaxNestingDepth: 32,
		MaxArrayLength:  1<<15 - 1,
		MaxMapEntries:   1 << 16,
		MaxBodySize:     104857600,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxFrameSize <= 0 {
		l.MaxFrameSize = d.MaxFrameSize
	}
	if l.MaxNestingDepth <= 0 {
		l.MaxNestingDepth = d.MaxNestingDepth
	}
	if l.MaxArrayLength <= 0 {
		l.MaxArrayLength = d.MaxArrayLength
	}
	if l.MaxMapEntries <= 0 {
		l.MaxMapEntries = d.MaxMapEntries
	}
	if l.MaxBodySize <= 0 {
		l.MaxBodySize = d.MaxBodySize
	}
	return l
}
