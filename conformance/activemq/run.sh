#!/usr/bin/env bash
# Runs the STOMP and JMS conformance tests against Debian's Apache ActiveMQ
# 5.17 (package "activemq"): starts a standalone broker on loopback with its
# data in a temporary directory, runs `go test ./conformance -run
# 'TestConformance(STOMP|JMS)'` with WHARF_CONFORMANCE_STOMP_ADDR,
# WHARF_CONFORMANCE_OPENWIRE_ADDR and WHARF_CONFORMANCE_MQTT_ADDR pointing
# at it, and stops it again. Every step is bounded in time.
#
# Environment:
#   STOMP_PORT        main STOMP connector port (default 61623)
#   STOMP_SMALL_PORT  connector with wireFormat.maxFrameSize=4096 (default 61624)
#   OPENWIRE_PORT     OpenWire connector port (default 61626)
#   MQTT_PORT         MQTT connector port (default 61627)
#   MQTT_SMALL_PORT   MQTT connector with wireFormat.maxFrameSize=1024 (default 61628)
#   MQTT_DOLLAR_PORT  MQTT connector with transport.publishDollarTopics=true (default 61629)
#   TESTS             go test -run pattern (default 'TestConformance(STOMP|JMS)')
#   GO_TEST_FLAGS     extra flags for go test (default "-count=1")
#   KEEP_TMP=1        keep the temporary directory (logs, KahaDB)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
port="${STOMP_PORT:-61623}"
small_port="${STOMP_SMALL_PORT:-61624}"
openwire_port="${OPENWIRE_PORT:-61626}"
mqtt_port="${MQTT_PORT:-61627}"
mqtt_small_port="${MQTT_SMALL_PORT:-61628}"
mqtt_dollar_port="${MQTT_DOLLAR_PORT:-61629}"
# shellcheck source=lib.sh
. "$here/lib.sh"

amq_install
amq_ports_free STOMP_PORT/STOMP_SMALL_PORT/OPENWIRE_PORT/MQTT_PORT/MQTT_SMALL_PORT/MQTT_DOLLAR_PORT \
	"$port" "$small_port" "$openwire_port" "$mqtt_port" "$mqtt_small_port" "$mqtt_dollar_port"
amq_base wharf-amq
trap amq_stop EXIT
cp "$here/activemq.xml" "$here/log4j.properties" "$amq_tmp/conf/"
log="$amq_tmp/activemq.log"
amq_start \
	-Dwharf.stomp.port="$port" \
	-Dwharf.stomp.small.port="$small_port" \
	-Dwharf.openwire.port="$openwire_port" \
	-Dwharf.mqtt.port="$mqtt_port" \
	-Dwharf.mqtt.small.port="$mqtt_small_port" \
	-Dwharf.mqtt.dollar.port="$mqtt_dollar_port"
amq_wait "$port" "$small_port" "$openwire_port" "$mqtt_port" "$mqtt_small_port" "$mqtt_dollar_port"

cd "$repo"
status=0
export WHARF_CONFORMANCE_STOMP_ADDR="127.0.0.1:$port"
export WHARF_CONFORMANCE_STOMP_SMALL_FRAME_ADDR="127.0.0.1:$small_port"
export WHARF_CONFORMANCE_OPENWIRE_ADDR="127.0.0.1:$openwire_port"
export WHARF_CONFORMANCE_MQTT_ADDR="127.0.0.1:$mqtt_port"
export WHARF_CONFORMANCE_MQTT_SMALL_ADDR="127.0.0.1:$mqtt_small_port"
export WHARF_CONFORMANCE_MQTT_DOLLAR_ADDR="127.0.0.1:$mqtt_dollar_port"
if [ -n "${AMQ_RUN:-}" ]; then
	# Any other command against the running ActiveMQ, e.g. the STOMP
	# benchmark: AMQ_RUN='WHARF_BENCH_STOMP_ADDR=$WHARF_CONFORMANCE_STOMP_ADDR go test -bench . ./bench'
	timeout 600 bash -c "$AMQ_RUN" || status=$?
else
	timeout 600 go test ./conformance -run "${TESTS:-TestConformance(STOMP|JMS)}" ${GO_TEST_FLAGS:--count=1} "$@" || status=$?
fi
if [ "$status" != 0 ]; then
	echo "go test exited $status; ActiveMQ log: $log" >&2
	KEEP_TMP="${KEEP_TMP:-1}"
fi
exit "$status"
