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
amq_home="/usr/share/activemq"

if [ ! -f "$amq_home/bin/activemq.jar" ]; then
	echo "ActiveMQ not installed; installing Debian's package" >&2
	apt-get install -y activemq >&2 || { apt-get update >&2 && apt-get install -y activemq >&2; }
fi
command -v java >/dev/null || { echo "java not found (apt-get install -y default-jre-headless)" >&2; exit 1; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in "$port" "$small_port" "$openwire_port" "$mqtt_port"; do
	if port_open "$p"; then
		echo "port $p is already in use; set STOMP_PORT/STOMP_SMALL_PORT/OPENWIRE_PORT/MQTT_PORT" >&2
		exit 1
	fi
done

tmp="$(mktemp -d -t wharf-amq.XXXXXX)"
mkdir -p "$tmp/conf" "$tmp/data" "$tmp/tmp"
cp "$here/activemq.xml" "$here/log4j.properties" "$tmp/conf/"
# ActiveMQ's STOMP converter renders advisory messages as JSON through
# XStream and Jettison (ProtocolConverter.findTranslator), which upstream
# ships in lib/optional; Debian's package leaves them out, and without them
# every advisory dispatched to a STOMP subscriber dies with
# NoClassDefFoundError. $ACTIVEMQ_BASE/lib is on the broker's extension
# classpath: link Debian's jars (libxstream-java, libjettison-java, xpp3)
# there when they are installed.
mkdir -p "$tmp/lib"
for jar in xstream jettison xpp3; do
	if [ -f "/usr/share/java/$jar.jar" ]; then
		ln -s "/usr/share/java/$jar.jar" "$tmp/lib/$jar.jar"
	else
		echo "warning: /usr/share/java/$jar.jar missing (apt-get install -y libxstream-java libjettison-java libxpp3-java); STOMP advisory tests will fail" >&2
	fi
done
# ActiveMQ's MQTT transport (activemq-mqtt.jar, in Debian's lib/) decodes
# with the FuseSource MQTT codec, which Debian ships in libmqtt-client-java
# (with HawtDispatch) and leaves off the broker's classpath; without it the
# mqtt:// connector cannot start and neither can the broker.
for jar in mqtt-client hawtdispatch hawtdispatch-transport; do
	if [ ! -f "/usr/share/java/$jar.jar" ]; then
		echo "/usr/share/java/$jar.jar missing; installing libmqtt-client-java" >&2
		apt-get install -y libmqtt-client-java >&2 || { apt-get update >&2 && apt-get install -y libmqtt-client-java >&2; }
	fi
	ln -s "/usr/share/java/$jar.jar" "$tmp/lib/$jar.jar"
done
log="$tmp/activemq.log"
pid=""

stop() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 1 40); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.5
		done
		kill -9 "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	if [ "${KEEP_TMP:-}" = 1 ]; then
		echo "kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
}
trap stop EXIT

# The same JVM flags /usr/bin/activemq passes for Java > 8, in the
# foreground instead of its daemon wrapper, so that this script owns the
# process and its lifetime.
java -Xms128M -Xmx512M \
	--add-reads=java.xml=java.logging \
	--add-opens java.base/java.security=ALL-UNNAMED \
	--add-opens java.base/java.net=ALL-UNNAMED \
	--add-opens java.base/java.lang=ALL-UNNAMED \
	--add-opens java.base/java.util=ALL-UNNAMED \
	--add-opens java.naming/javax.naming.spi=ALL-UNNAMED \
	--add-opens java.rmi/sun.rmi.transport.tcp=ALL-UNNAMED \
	--add-opens java.base/java.util.concurrent=ALL-UNNAMED \
	--add-opens java.base/java.util.concurrent.atomic=ALL-UNNAMED \
	-Dactivemq.classpath="$tmp/conf" \
	-Dactivemq.home="$amq_home" \
	-Dactivemq.base="$tmp" \
	-Dactivemq.conf="$tmp/conf" \
	-Dactivemq.data="$tmp/data" \
	-Djava.io.tmpdir="$tmp/tmp" \
	-Dlog4j.configuration="file:$tmp/conf/log4j.properties" \
	-Dwharf.stomp.port="$port" \
	-Dwharf.stomp.small.port="$small_port" \
	-Dwharf.openwire.port="$openwire_port" \
	-Dwharf.mqtt.port="$mqtt_port" \
	-jar "$amq_home/bin/activemq.jar" start "xbean:file:$tmp/conf/activemq.xml" \
	>"$log" 2>&1 &
pid=$!

echo "waiting for ActiveMQ (pid $pid) on 127.0.0.1:$port" >&2
for i in $(seq 1 120); do
	if port_open "$port" && port_open "$small_port" && port_open "$openwire_port" && port_open "$mqtt_port"; then
		break
	fi
	if ! kill -0 "$pid" 2>/dev/null || [ "$i" = 120 ]; then
		echo "ActiveMQ did not start; log follows" >&2
		cat "$log" >&2
		exit 1
	fi
	sleep 0.5
done
grep -m1 'Apache ActiveMQ .* started' "$log" >&2 || true

cd "$repo"
status=0
export WHARF_CONFORMANCE_STOMP_ADDR="127.0.0.1:$port"
export WHARF_CONFORMANCE_STOMP_SMALL_FRAME_ADDR="127.0.0.1:$small_port"
export WHARF_CONFORMANCE_OPENWIRE_ADDR="127.0.0.1:$openwire_port"
export WHARF_CONFORMANCE_MQTT_ADDR="127.0.0.1:$mqtt_port"
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
