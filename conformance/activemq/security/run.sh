#!/usr/bin/env bash
# Runs the security matrix (conformance/security_*_test.go) against Debian's
# Apache ActiveMQ 5.17: for each authentication variant (JAAS with
# login.config/users.properties/groups.properties, then the simple plugin
# with credentials.properties) it starts a standalone broker on loopback
# with activemq-<variant>.xml and its data in a temporary directory, runs
# `go test ./conformance -run TestConformanceSecurity` with
# WHARF_CONFORMANCE_SECURITY_ACTIVEMQ=1 and the connector addresses, and
# stops it again. Every step is bounded in time.
#
# Environment:
#   VARIANTS        which configurations to run (default "jaas simple")
#   OPENWIRE_PORT   OpenWire connector port (default 61716)
#   STOMP_PORT      STOMP connector port (default 61713)
#   MQTT_PORT       MQTT connector port (default 61783)
#   TESTS           go test -run pattern (default TestConformanceSecurity)
#   GO_TEST_FLAGS   extra flags for go test (default "-count=1")
#   AMQ_RUN         run this command instead of go test (the variables
#                   above are set), e.g. AMQ_RUN='sleep 1800' to keep a
#                   broker up for manual runs; AMQ_RUN_TIMEOUT bounds it (600)
#   KEEP_TMP=1      keep the temporary directories (logs, KahaDB)
#
# Debian's ActiveMQ has no WebSocket (activemq-http) and no AMQP transport:
# the ws/mqtt-over-ws/AMQP/MQTT 5 cells run against Wharf only.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
openwire_port="${OPENWIRE_PORT:-61716}"
stomp_port="${STOMP_PORT:-61713}"
mqtt_port="${MQTT_PORT:-61783}"
# shellcheck source=../lib.sh
. "$here/../lib.sh"

amq_install
trap amq_stop EXIT

# run_variant starts ActiveMQ with activemq-$1.xml and runs the tests.
run_variant() {
	local variant="$1"
	amq_ports_free OPENWIRE_PORT/STOMP_PORT/MQTT_PORT "$openwire_port" "$stomp_port" "$mqtt_port" || return 1
	amq_base wharf-amq-sec
	cp "$here/activemq-$variant.xml" "$amq_tmp/conf/activemq.xml"
	cp "$here/login.config" "$here/users.properties" "$here/groups.properties" \
		"$here/credentials.properties" "$here/log4j.properties" "$amq_tmp/conf/"
	local log="$amq_tmp/activemq.log"
	# The JAAS login.config that bin/activemq points at ${activemq.conf}.
	amq_start \
		-Djava.security.auth.login.config="$amq_tmp/conf/login.config" \
		-Dwharf.sec.openwire.port="$openwire_port" \
		-Dwharf.sec.stomp.port="$stomp_port" \
		-Dwharf.sec.mqtt.port="$mqtt_port"
	echo "[$variant] ActiveMQ pid $amq_pid" >&2
	amq_wait "$openwire_port" "$stomp_port" "$mqtt_port" || return 1

	local status=0
	(
		cd "$repo"
		export WHARF_CONFORMANCE_SECURITY_ACTIVEMQ=1
		export WHARF_CONFORMANCE_SECURITY_VARIANT="$variant"
		export WHARF_CONFORMANCE_SECURITY_OPENWIRE_ADDR="127.0.0.1:$openwire_port"
		export WHARF_CONFORMANCE_SECURITY_STOMP_ADDR="127.0.0.1:$stomp_port"
		export WHARF_CONFORMANCE_SECURITY_MQTT_ADDR="127.0.0.1:$mqtt_port"
		if [ -n "${AMQ_RUN:-}" ]; then
			timeout "${AMQ_RUN_TIMEOUT:-600}" bash -c "$AMQ_RUN"
		else
			timeout 600 go test ./conformance -run "${TESTS:-TestConformanceSecurity}" ${GO_TEST_FLAGS:--count=1} "$@"
		fi
	) || status=$?
	if [ "$status" != 0 ]; then
		echo "[$variant] go test exited $status; ActiveMQ log: $log" >&2
		KEEP_TMP=1
	fi
	amq_stop
	return "$status"
}

overall=0
for v in ${VARIANTS:-jaas simple}; do
	run_variant "$v" "$@" || overall=$?
done
exit "$overall"
