#!/usr/bin/env bash
# Side by side: ActiveMQ 5.17 (Debian's, KahaDB, disk syncs on) and Wharf
# (its KahaDB store, disk syncs on),
# the same JMS client program against each, alternating A B, three rounds.
# Bounded: every run stops by itself (count and a 300 s timeout).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cp=/usr/share/java/activemq-client.jar:/usr/share/java/geronimo-jms_1.1_spec.jar:/usr/share/java/hawtbuf.jar:/usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-nop.jar:/usr/share/java/geronimo-j2ee-management-1.1-spec.jar
out="$(mktemp -d)"
trap 'rm -rf "$out"; [ -n "${wpid:-}" ] && kill $wpid 2>/dev/null || true' EXIT
javac -d "$out" -cp "$cp" "$here/JmsBench.java"
cd "$repo"
go build -o "$out/wharf" ./cmd/wharf
cat > "$out/wharf.yaml" <<Y
transport_connectors:
  - {name: openwire, uri: "tcp://127.0.0.1:62716"}
persistence: {kahadb: {directory: "$out/kahadb"}}
Y
"$out/wharf" run --config "$out/wharf.yaml" --log-level warn &
wpid=$!
COUNT="${COUNT:-50000}"
scenarios=("queue nonpersistent $COUNT 1024 1" "queue persistent $((COUNT/5)) 1024 1" "topic nonpersistent $((COUNT/5)) 1024 10")
export BENCH_CP="$out:$cp" SCEN="$(printf '%s;' "${scenarios[@]}")"
AMQ_RUN='IFS=";" read -ra S <<< "$SCEN"; for round in 1 2 3; do for s in "${S[@]}"; do [ -z "$s" ] && continue; echo "AMQ   $(java -cp "$BENCH_CP" JmsBench "tcp://$WHARF_CONFORMANCE_OPENWIRE_ADDR" $s)"; echo "WHARF $(java -cp "$BENCH_CP" JmsBench tcp://127.0.0.1:62716 $s)"; done; done' \
	conformance/activemq/run.sh
