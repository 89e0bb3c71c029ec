# shellcheck shell=bash
# Shared by the scripts that run Debian's Apache ActiveMQ 5.17 as the
# reference broker (run.sh, security/run.sh): install it if missing, lay
# out a private ACTIVEMQ_BASE, start it in the foreground, wait for its
# connectors and stop it. Source it; it defines functions and amq_home,
# and sets amq_pid and amq_tmp.

amq_home="/usr/share/activemq"
amq_pid=""
amq_tmp=""

# port_open reports whether something listens on 127.0.0.1:$1.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# amq_install installs Debian's activemq package (and checks for java) when
# it is missing.
amq_install() {
	if [ ! -f "$amq_home/bin/activemq.jar" ]; then
		echo "ActiveMQ not installed; installing Debian's package" >&2
		apt-get install -y activemq >&2 || { apt-get update >&2 && apt-get install -y activemq >&2; }
	fi
	command -v java >/dev/null || { echo "java not found (apt-get install -y default-jre-headless)" >&2; return 1; }
}

# amq_ports_free fails, naming the port and the variables in $1, if any of
# the ports after it is already taken.
amq_ports_free() {
	local vars="$1" p
	shift
	for p in "$@"; do
		if port_open "$p"; then
			echo "port $p is already in use; set $vars" >&2
			return 1
		fi
	done
}

# amq_base makes a temporary ACTIVEMQ_BASE in amq_tmp (prefix $1) with
# conf/, data/, tmp/ and lib/. Debian ships outside the broker's classpath
# two things the reference configurations need, so lib/ (on the broker's
# extension classpath) links them in:
#   - XStream, Jettison and xpp3: ActiveMQ's STOMP converter renders
#     advisory messages as JSON through them (ProtocolConverter.
#     findTranslator); upstream has them in lib/optional, and without them
#     every advisory dispatched to a STOMP subscriber dies with
#     NoClassDefFoundError;
#   - the FuseSource MQTT codec with HawtDispatch (libmqtt-client-java):
#     activemq-mqtt.jar decodes with it, and without it the mqtt://
#     connector cannot start and neither can the broker.
amq_base() {
	amq_tmp="$(mktemp -d -t "$1.XXXXXX")"
	mkdir -p "$amq_tmp/conf" "$amq_tmp/data" "$amq_tmp/tmp" "$amq_tmp/lib"
	local jar
	for jar in xstream jettison xpp3 mqtt-client hawtdispatch hawtdispatch-transport; do
		if [ ! -f "/usr/share/java/$jar.jar" ]; then
			echo "/usr/share/java/$jar.jar missing; installing Debian's jars" >&2
			apt-get install -y libxstream-java libjettison-java libxpp3-java libmqtt-client-java >&2 ||
				{ apt-get update >&2 && apt-get install -y libxstream-java libjettison-java libxpp3-java libmqtt-client-java >&2; }
		fi
		ln -s "/usr/share/java/$jar.jar" "$amq_tmp/lib/$jar.jar"
	done
}

# amq_start starts ActiveMQ on $amq_tmp/conf/activemq.xml with the same
# JVM flags /usr/bin/activemq passes for Java > 8, in the foreground
# instead of its daemon wrapper (so that the script owns the process and
# its lifetime), logging to $amq_tmp/activemq.log. Its arguments are extra
# JVM flags (-D properties the configuration reads). Sets amq_pid.
amq_start() {
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
		-Dactivemq.classpath="$amq_tmp/conf" \
		-Dactivemq.home="$amq_home" \
		-Dactivemq.base="$amq_tmp" \
		-Dactivemq.conf="$amq_tmp/conf" \
		-Dactivemq.data="$amq_tmp/data" \
		-Djava.io.tmpdir="$amq_tmp/tmp" \
		-Dlog4j.configuration="file:$amq_tmp/conf/log4j.properties" \
		"$@" \
		-jar "$amq_home/bin/activemq.jar" start "xbean:file:$amq_tmp/conf/activemq.xml" \
		>"$amq_tmp/activemq.log" 2>&1 &
	amq_pid=$!
}

# amq_wait waits (60 s at most) until every port given listens, and fails
# with the broker's log if it exits or the time runs out first.
amq_wait() {
	echo "waiting for ActiveMQ (pid $amq_pid) on 127.0.0.1:$*" >&2
	local i p up
	for i in $(seq 1 120); do
		up=1
		for p in "$@"; do
			port_open "$p" || { up=0; break; }
		done
		[ "$up" = 1 ] && break
		if ! kill -0 "$amq_pid" 2>/dev/null || [ "$i" = 120 ]; then
			echo "ActiveMQ did not start; log follows" >&2
			cat "$amq_tmp/activemq.log" >&2
			return 1
		fi
		sleep 0.5
	done
	grep -m1 'Apache ActiveMQ .* started' "$amq_tmp/activemq.log" >&2 || true
}

# amq_stop stops the broker (SIGTERM, then SIGKILL after 20 s) and removes
# its base directory unless KEEP_TMP=1.
amq_stop() {
	if [ -n "$amq_pid" ] && kill -0 "$amq_pid" 2>/dev/null; then
		kill "$amq_pid" 2>/dev/null || true
		local _
		for _ in $(seq 1 40); do
			kill -0 "$amq_pid" 2>/dev/null || break
			sleep 0.5
		done
		kill -9 "$amq_pid" 2>/dev/null || true
		wait "$amq_pid" 2>/dev/null || true
	fi
	amq_pid=""
	if [ -n "$amq_tmp" ]; then
		if [ "${KEEP_TMP:-}" = 1 ]; then
			echo "kept $amq_tmp" >&2
		else
			rm -rf "$amq_tmp"
		fi
	fi
	amq_tmp=""
}
