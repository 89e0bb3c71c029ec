package wire

import (
	"strings"
	"unicode/utf8"
)

// maxTopicBytes is the longest topic name or filter: a UTF-8 string's
// two-byte length prefix [MQTT-4.7.3-3].
const maxTopicBytes = 65535

// sharePrefix starts every shared subscription filter (MQTT 5 §4.8.2).
const sharePrefix = "$share/"

// ValidTopicName checks a topic name as a PUBLISH (or a will) carries it
// (MQTT 5 §4.7, MQTT 3.1.1 §4.7): 1..65535 bytes [MQTT-4.7.3-1]
// [MQTT-4.7.3-3], well-formed UTF-8 [MQTT-1.5.4-1] without U+0000
// [MQTT-4.7.3-2], and no wildcard [MQTT-3.3.2-2]. The empty name of an MQTT
// 5 PUBLISH that uses a Topic Alias is for the session to allow; the decoder
// already does. Errors wrap ErrTopicNameInvalid (reason 0x90).
//
// Topic names starting with "$" are valid here: whether a client may
// publish to them is the session's policy (ActiveMQ drops them unless
// publishDollarTopics is set).
func ValidTopicName(s string) error {
	if err := checkTopicString(s, ReasonTopicNameInvalid, "topic name"); err != nil {
		return err
	}
	if i := strings.IndexAny(s, "+#"); i >= 0 {
		return newError(ReasonTopicNameInvalid, "topic name %q contains wildcard %q [MQTT-3.3.2-2]", clip(s), s[i])
	}
	return nil
}

// ValidTopicFilter checks a topic filter (MQTT 5 §4.7): 1..65535 bytes,
// well-formed UTF-8 without U+0000, "+" alone in its level
// [MQTT-4.7.1-3], "#" alone in the last level [MQTT-4.7.1-2]. Errors wrap
// ErrTopicFilterInvalid (reason 0x8F).
//
// A "$share/group/filter" is a valid filter here, as it is in 3.1.1; an MQTT
// 5 session calls ParseShared first to split off and check the share name.
func ValidTopicFilter(s string) error {
	if err := checkTopicString(s, ReasonTopicFilterInvalid, "topic filter"); err != nil {
		return err
	}
	for rest := s; ; {
		level := rest
		i := strings.IndexByte(rest, '/')
		if i >= 0 {
			level = rest[:i]
		}
		if len(level) > 1 || i >= 0 {
			if strings.IndexByte(level, '#') >= 0 {
				return newError(ReasonTopicFilterInvalid,
					"topic filter %q: '#' must be alone in the last level [MQTT-4.7.1-2]", clip(s))
			}
		}
		if len(level) > 1 && strings.IndexByte(level, '+') >= 0 {
			return newError(ReasonTopicFilterInvalid,
				"topic filter %q: '+' must be alone in its level [MQTT-4.7.1-3]", clip(s))
		}
		if i < 0 {
			return nil
		}
		rest = rest[i+1:]
	}
}

// ParseShared splits an MQTT 5 shared subscription filter
// "$share/{ShareName}/{filter}" (MQTT 5 §4.8.2). For any filter that does
// not start with "$share/" it returns ok false, the filter unchanged and no
// error. For a shared one it returns the share name and the inner filter
// with ok true, or an error wrapping ErrTopicFilterInvalid when the share
// name is empty [MQTT-4.8.2-1], holds "+" or "#" or is not followed by "/"
// and a valid topic filter [MQTT-4.8.2-2].
//
// Only MQTT 5 gives "$share/" a meaning; a 3.1.1 session treats it as an
// ordinary filter.
func ParseShared(s string) (group, filter string, ok bool, err error) {
	if !strings.HasPrefix(s, sharePrefix) {
		return "", s, false, nil
	}
	rest := s[len(sharePrefix):]
	i := strings.IndexByte(rest, '/')
	if i < 0 {
		return "", "", true, newError(ReasonTopicFilterInvalid,
			"shared subscription %q has no topic filter after the share name [MQTT-4.8.2-2]", clip(s))
	}
	group, filter = rest[:i], rest[i+1:]
	if group == "" {
		return "", "", true, newError(ReasonTopicFilterInvalid,
			"shared subscription %q has an empty share name [MQTT-4.8.2-1]", clip(s))
	}
	if strings.ContainsAny(group, "+#") {
		return "", "", true, newError(ReasonTopicFilterInvalid,
			"shared subscription %q: share name holds a wildcard [MQTT-4.8.2-2]", clip(s))
	}
	if err := ValidTopicFilter(filter); err != nil {
		return "", "", true, newError(ReasonTopicFilterInvalid,
			"shared subscription %q: %s [MQTT-4.8.2-2]", clip(s), strings.TrimPrefix(err.Error(), "mqtt: "))
	}
	return group, filter, true, nil
}

// checkTopicString applies the rules common to topic names and filters.
func checkTopicString(s string, reason byte, what string) error {
	switch {
	case s == "":
		return newError(reason, "%s is empty [MQTT-4.7.3-1]", what)
	case len(s) > maxTopicBytes:
		return newError(reason, "%s of %d bytes exceeds 65535 bytes [MQTT-4.7.3-3]", what, len(s))
	case strings.IndexByte(s, 0) >= 0:
		return newError(reason, "%s %q contains U+0000 [MQTT-4.7.3-2]", what, clip(s))
	case !utf8.ValidString(s):
		return newError(reason, "%s %q is not valid UTF-8 [MQTT-1.5.4-1]", what, clip(s))
	}
	return nil
}

// clip shortens s for an error message, so a hostile 64 KiB topic does not
// become a 64 KiB log line.
func clip(s string) string {
	const maxLen = 128
	if len(s) <= maxLen {
		return s
	}
	return s[:maxLen] + "..."
}
