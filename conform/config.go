package conform

import _ "embed" // ConfigXML

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
