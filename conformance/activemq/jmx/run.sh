#!/usr/bin/env bash
# The ActiveMQ side of the JMX differential test (issue 16): starts Debian's
# ActiveMQ 5.17 on loopback with its JMX connector (activemq.xml here),
# makes the traffic reads.txt expects over STOMP (3 persistent messages to
# queue jmx.orders, the one with tag = 'x' consumed with auto ack, 1 to
# topic jmx.news, a durable subscription jmx-client:sub on jmx.news left
# inactive, then 1 more persistent message to jmx.news, which the inactive
# subscription keeps), then prints the reads of
# reads.txt as JSON lines (JmxRead.java) and stops the broker. Every step is
# bounded in time.
#
# Environment:
#   STOMP_PORT    STOMP connector (default 61633)
#   JMX_PORT      JMX RMI registry (default 11099)
#   JMX_RMI_PORT  JMX RMI server (default 11100)
#   KEEP_TMP=1    keep the temporary directory (log, KahaDB)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
stomp_port="${STOMP_PORT:-61633}"
jmx_port="${JMX_PORT:-11099}"
rmi_port="${JMX_RMI_PORT:-11100}"
# shellcheck source=../lib.sh
. "$here/../lib.sh"

amq_install
command -v javac >/dev/null || { echo "javac not found (apt-get install -y default-jdk-headless)" >&2; exit 1; }
amq_ports_free STOMP_PORT/JMX_PORT/JMX_RMI_PORT "$stomp_port" "$jmx_port" "$rmi_port"
amq_base wharf-amq-jmx
trap amq_stop EXIT
mkdir -p "$amq_tmp/classes"
cp "$here/activemq.xml" "$amq_tmp/conf/"
cp "$here/../log4j.properties" "$amq_tmp/conf/"
javac -d "$amq_tmp/classes" "$here/JmxRead.java"

amq_start \
	-Djava.rmi.server.hostname=127.0.0.1 \
	-Dwharf.stomp.port="$stomp_port" \
	-Dwharf.jmx.port="$jmx_port" \
	-Dwharf.jmx.rmi.port="$rmi_port"
amq_wait "$stomp_port" "$jmx_port"

# stomp sends frames (NUL-terminated) on one connection and waits for the
# RECEIPT of the last one, at most 10 s.
stomp() {
	exec 4<>"/dev/tcp/127.0.0.1/$stomp_port"
	printf '%b' "$@" >&4
	timeout 10 grep -a -m1 'receipt-id:done' <&4 >/dev/null
	exec 4>&-
}
nul='\0'
stomp "CONNECT\naccept-version:1.2\nhost:localhost\n\n$nul" \
	"SEND\ndestination:/queue/jmx.orders\npersistent:true\n\none$nul" \
	"SEND\ndestination:/queue/jmx.orders\npersistent:true\ntag:x\n\ntwo$nul" \
	"SEND\ndestination:/queue/jmx.orders\npersistent:true\n\nthree$nul" \
	"SEND\ndestination:/topic/jmx.news\npersistent:true\n\nnews$nul" \
	"DISCONNECT\nreceipt:done\n\n$nul"
# The consumer disconnects only once its message came: ActiveMQ dispatches
# asynchronously, and a DISCONNECT that overtakes the dispatch would leave
# the message on the queue (auto ack acknowledges on dispatch).
exec 4<>"/dev/tcp/127.0.0.1/$stomp_port"
printf '%b' "CONNECT\naccept-version:1.2\nhost:localhost\n\n$nul" \
	"SUBSCRIBE\nid:1\ndestination:/queue/jmx.orders\nack:auto\nselector:tag = 'x'\n\n$nul" >&4
timeout 10 grep -a -m1 'subscription:1' <&4 >/dev/null
printf '%b' "DISCONNECT\nreceipt:done\n\n$nul" >&4
timeout 10 grep -a -m1 'receipt-id:done' <&4 >/dev/null
exec 4>&-
stomp "CONNECT\naccept-version:1.2\nhost:localhost\nclient-id:jmx-client\n\n$nul" \
	"SUBSCRIBE\nid:1\ndestination:/topic/jmx.news\nactivemq.subscriptionName:sub\n\n$nul" \
	"DISCONNECT\nreceipt:done\n\n$nul"
stomp "CONNECT\naccept-version:1.2\nhost:localhost\n\n$nul" \
	"SEND\ndestination:/topic/jmx.news\npersistent:true\n\nmore news$nul" \
	"DISCONNECT\nreceipt:done\n\n$nul"

# A poison message: sent to jmx.poison, received with client-individual
# acks and NACKed, which sends it to ActiveMQ.DLQ.
exec 4<>"/dev/tcp/127.0.0.1/$stomp_port"
printf '%b' "CONNECT\naccept-version:1.2\nhost:localhost\n\n$nul" \
	"SEND\ndestination:/queue/jmx.poison\npersistent:true\nreceipt:sent\n\npoison$nul" \
	"SUBSCRIBE\nid:1\ndestination:/queue/jmx.poison\nack:client-individual\n\n$nul" >&4
ack=$(timeout 10 grep -a -m1 '^ack:' <&4 | cut -d: -f2- | tr -d '\r')
# The id stays as the MESSAGE frame wrote it, escaped (":" as "\c"): %s,
# since %b would read its "\c" as the end of the output.
{ printf 'NACK\nid:%s\n\n' "$ack"; printf '%b' "$nul" "DISCONNECT\nreceipt:done\n\n$nul"; } >&4
timeout 10 grep -a -m1 'receipt-id:done' <&4 >/dev/null
exec 4>&-

java -cp "$amq_tmp/classes" JmxRead "service:jmx:rmi:///jndi/rmi://127.0.0.1:$jmx_port/jmxrmi" <"$here/reads.txt"
