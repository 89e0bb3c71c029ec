package config

import (
	"io"
)

// ReadProperties parses text in java.util.Properties' format (what
// Properties.store writes and Properties.load reads): comments, key=value
// lines, continuations and escapes. A duplex network bridge's BrokerInfo
// carries its connector's settings so (networkProperties).
func ReadProperties(r io.Reader) (map[string]string, error) {
	m := map[string]string{}
	if err := readProperties(r, m); err != nil {
		return nil, err
	}
	return m, nil
}
