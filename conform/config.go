package conform

import (
	_ "embed" // ConfigXML
	"strings"
)

// ConfigXML is the activemq.xml that sets up everything the cases rely
// on (the policies, interceptors and connectors their Config fields name),
// for ActiveMQ 5.17 and Wharf alike. Its ${...} placeholders are the data
// directory and the ports: give them as -D properties (ActiveMQ's
// bin/activemq, and wharf run, both take -Dname=value). It is the file
// conformance/activemq/run.sh starts ActiveMQ with; a test in conformance/
// checks that the two copies are the same.
//
//go:embed activemq.xml
var ConfigXML string

// ConfigXMLWithAMQP is ConfigXML with its two AMQP connectors (amqp and
// amqp-idle, left in a comment because Debian's ActiveMQ 5.17 cannot serve
// AMQP) taken out of the comment, for a broker that has AMQP: Wharf, or
// ActiveMQ's own distribution. Their ports are ${wharf.amqp.port} and
// ${wharf.amqp.idle.port}.
func ConfigXMLWithAMQP() string {
	s := strings.Replace(ConfigXML, "BEGIN AMQP\n", "BEGIN AMQP -->\n", 1)
	return strings.Replace(s, "           END AMQP -->\n", "", 1)
}
