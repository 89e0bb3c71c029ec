# Wharf. `make run` starts a broker on its defaults; `make test` runs every test.
GO      ?= go
PKGS    := ./...
# Engine and protocols run under the race detector (STYLE.md §9).
RACE_PKGS := ./engine/... ./protocols/... ./storage/... ./conformance/...
FUZZTIME ?= 10s

.PHONY: build run test test-deps check vet fmt race unit fuzz fuzz-long bench bench-engine isolation soak console-screenshots tools clean torture

build:
	$(GO) build -o bin/wharf ./cmd/wharf

run: build
	./bin/wharf run

# The README's test command, and what .ci/run calls: formatting, vet, the
# whole suite with -race, and a short fuzz smoke run of every decoder.
test: test-deps fmt vet race fuzz

# What the JMS conformance suite and the OpenWire client's tests need: Java,
# Debian's ActiveMQ JMS client jars, and Debian's ActiveMQ as the reference
# broker. Installed with apt-get when missing and possible (CI runs as root);
# without them those tests skip, saying what to install.
# The MQTT tests also use Debian's mosquitto-clients (mosquitto_pub/sub).
JMS_PKGS := default-jdk-headless libactivemq-java activemq libmqtt-client-java mosquitto-clients mosquitto
# The AMQP client tests (conformance/amqp_clients_test.go) use Debian's
# python3-qpid-proton (under /usr/bin/python3) and Node.js with the rhea
# package that $(AMQP_CLIENTS)/package-lock.json pins, which `npm ci` puts in
# $(AMQP_CLIENTS)/node_modules when it is missing or older than the lock.
# The confirmed-ack kill test (conformance/kahadb_ackkill_test.go) uses
# Debian's stomp.py (python3-stomp) under /usr/bin/python3.
# The web server's metrics test checks /metrics with promtool, from
# Debian's prometheus package; its console tests drive Debian's chromium
# headless (chromedp). The JDBC store's tests (storage/jdbc, conformance)
# start a private cluster of Debian's postgresql (internal/pgtest); those
# with ActiveMQ on the same database put Debian's libpostgresql-jdbc-java
# on its classpath, and libjaxb-api-java (ActiveMQ's JDBC store encodes
# XA Xids with JAXB's DatatypeConverter).
# Only what is missing is installed: a machine's Node.js may come with its
# own npm.
AMQP_CLIENTS := conformance/amqpclients
test-deps:
	@if command -v javac >/dev/null && [ -f /usr/share/java/activemq-client.jar ] && [ -f /usr/share/activemq/bin/activemq.jar ] && command -v mosquitto_pub >/dev/null && [ -x /usr/sbin/mosquitto ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing $(JMS_PKGS)"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(JMS_PKGS) >/dev/null || \
		{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(JMS_PKGS) >/dev/null; } || \
		echo "could not install $(JMS_PKGS): the JMS tests will skip"; \
	else echo "missing Java or ActiveMQ jars ($(JMS_PKGS)): the JMS tests will skip"; fi
	@pkgs=""; \
	/usr/bin/python3 -c 'import proton.reactor' 2>/dev/null || pkgs="$$pkgs python3-qpid-proton"; \
	/usr/bin/python3 -c 'import stomp' 2>/dev/null || pkgs="$$pkgs python3-stomp"; \
	command -v node >/dev/null || pkgs="$$pkgs nodejs"; \
	command -v npm >/dev/null || pkgs="$$pkgs npm"; \
	command -v promtool >/dev/null || pkgs="$$pkgs prometheus"; \
	command -v chromium >/dev/null || pkgs="$$pkgs chromium"; \
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || pkgs="$$pkgs postgresql"; \
	[ -f /usr/share/java/postgresql.jar ] || pkgs="$$pkgs libpostgresql-jdbc-java"; \
	[ -f /usr/share/java/jaxb-api.jar ] || pkgs="$$pkgs libjaxb-api-java"; \
	command -v ip >/dev/null || pkgs="$$pkgs iproute2"; \
	if [ -z "$$pkgs" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing$$pkgs"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$pkgs >/dev/null || \
		{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$pkgs >/dev/null; } || \
		echo "could not install$$pkgs: the AMQP client tests (and, without python3-stomp, the confirmed-ack kill test; without prometheus, the promtool checks; without chromium, the console's browser tests; without postgresql, the JDBC store's tests; without libpostgresql-jdbc-java, the JDBC tests with ActiveMQ; without libjaxb-api-java, the JDBC XA tests with ActiveMQ; without iproute2, the multicast discovery tests in network namespaces) will skip"; \
	else echo "missing$$pkgs: the AMQP client tests (and, without python3-stomp, the confirmed-ack kill test; without prometheus, the promtool checks; without chromium, the console's browser tests; without postgresql, the JDBC store's tests; without libpostgresql-jdbc-java, the JDBC tests with ActiveMQ; without libjaxb-api-java, the JDBC XA tests with ActiveMQ; without iproute2, the multicast discovery tests in network namespaces) will skip"; fi
	@# RabbitMQ 3.10, for wharf conform's run against a third broker
	@# (TestWharfConformRabbitMQ starts a private node on ports of its own):
	@# installed with services kept from starting (policy-rc.d), so that no
	@# system node takes 5672 or 4369.
	@if ! [ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing rabbitmq-server"; made=; \
		if ! [ -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d; made=1; fi; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q rabbitmq-server >/dev/null || \
		{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q rabbitmq-server >/dev/null; } || \
		echo "could not install rabbitmq-server: wharf conform's RabbitMQ test will skip"; \
		if [ -n "$$made" ]; then rm -f /usr/sbin/policy-rc.d; fi; \
	fi
	@if command -v npm >/dev/null && ! [ $(AMQP_CLIENTS)/node_modules/.package-lock.json -nt $(AMQP_CLIENTS)/package-lock.json ]; then \
		echo "npm ci --prefix $(AMQP_CLIENTS)"; \
		npm ci --prefix $(AMQP_CLIENTS) --no-audit --no-fund >/dev/null || \
		echo "npm ci failed: the rhea AMQP client test will skip"; \
	fi

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

race:
	$(GO) test -race -count=1 -timeout 30m $(PKGS)

unit:
	$(GO) test -count=1 $(PKGS)

# Each fuzz target briefly, on top of its seed corpus (STYLE.md §9).
FUZZ_TARGETS := \
	./protocols/stomp/wire:FuzzSTOMPWireDecode \
	./protocols/mqtt/wire:FuzzMQTTWireDecode \
	./protocols/amqp/wire:FuzzAMQPWireDecode \
	./protocols/stomp:FuzzSTOMPSession \
	./protocols/mqtt:FuzzMQTTSession \
	./protocols/amqp:FuzzAMQPConnection \
	./protocols/stomp:FuzzSTOMPSessionFrames \
	./protocols/mqtt:FuzzMQTTSessionPackets \
	./protocols/amqp:FuzzAMQPSessionFrames \
	./protocols/openwire:FuzzOpenWireSessionCommands \
	./protocols/transport/ws/wire:FuzzWSWireDecode \
	./protocols/transport/ws/wire:FuzzWSWireUTF8 \
	./protocols/openwire/wire:FuzzOpenWireWireDecodeTight \
	./protocols/openwire/wire:FuzzOpenWireWireDecodeLoose \
	./storage/kahadb/command:FuzzKahaDBCommandDecode \
	./storage/kahadb:FuzzKahaDBIndex \
	./engine/selector:FuzzSelectorParse \
	./engine/message:FuzzMessageBinaryDecode \
	./security:FuzzSecurityProperties \
	./security:FuzzSecurityLoginConfig \
	./security:FuzzSecurityJavaDN \
	./security/enc:FuzzEncDecrypt \
	./protocols/http/jolokia:FuzzJolokiaRequest

# Go 1.26's fuzz coordinator can fail a target with a bare "context deadline
# exceeded" when -fuzztime ends while a worker is busy (golang/go#75804,
# fixed in Go 1.27): such a run wrote no failing input, so it is reported
# and not counted; a run that wrote one under testdata/fuzz fails.
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name ($(FUZZTIME))"; \
		before=$$(ls $$pkg/testdata/fuzz/$$name 2>/dev/null | wc -l); \
		if ! $(GO) test -run='^$$' -fuzz="^$$name$$" -fuzztime=$(FUZZTIME) $$pkg > /tmp/wharf-fuzz.$$$$ 2>&1; then \
			after=$$(ls $$pkg/testdata/fuzz/$$name 2>/dev/null | wc -l); \
			cat /tmp/wharf-fuzz.$$$$; \
			if [ "$$after" = "$$before" ] && grep -q "context deadline exceeded" /tmp/wharf-fuzz.$$$$; then \
				echo "fuzz $$name: stopped by Go's fuzztime race (golang/go#75804), no failing input: not a failure"; \
			else rm -f /tmp/wharf-fuzz.$$$$; exit 1; fi; \
		else tail -3 /tmp/wharf-fuzz.$$$$; fi; \
		rm -f /tmp/wharf-fuzz.$$$$; \
	done

# Every fuzz target for FUZZ_EXECS executions (default 10 M, issue #17),
# or for FUZZ_TIME each when set (e.g. FUZZ_TIME=30m), one after the other;
# prints a table of target, executions, new corpus entries, time and
# result, and fails if any target wrote a failing input.
FUZZ_EXECS ?= 10000000
fuzz-long:
	@FUZZ_EXECS=$(FUZZ_EXECS) GO=$(GO) scripts/fuzz-long.sh $(FUZZ_TARGETS)

# Connection churn for CHURN_DURATION (default 10 minutes, issue #17): real
# clients of every protocol open and close connections in a loop; the test
# fails unless open files, goroutines, RSS and heap are back to their
# baseline once the broker has closed every connection. `make test` runs
# its short form (2,000 connections).
CHURN_DURATION ?= 10m
.PHONY: churn
churn:
	WHARF_CHURN_DURATION=$(CHURN_DURATION) $(GO) test -count=1 -timeout 0 -v -run '^TestConformanceHostileConnectionChurn$$' ./conformance/

# The kill torture (torture/, issue 17): KILLS SIGKILLs of a wharf process
# on KahaDB under a mixed load of every protocol, then the bank-style
# check. SEED=<n> replays a run's schedule (the test logs its seed); XA=0
# leaves out ActiveMQ's XA client's branches. `make test` runs it with 10 kills.
KILLS ?= 100
SEED  ?=
XA    ?= 1
torture: test-deps
	WHARF_TORTURE_KILLS=$(KILLS) WHARF_TORTURE_SEED=$(SEED) WHARF_TORTURE_XA=$(XA) \
		$(GO) test -count=1 -timeout 60m -run '^TestTorture$$' -v ./torture

# Master/slave failover (issue 20): a continuous synchronous JMS producer and
# consumer (ActiveMQ's client, failover:(a,b)) while the master wharf process
# on a shared KahaDB directory is SIGKILLed FAILOVER_KILLS times in a row; the
# FAILOVER line gives the takeover times (median, max), lost and duplicate
# messages. `make test` runs it with 3 kills.
FAILOVER_KILLS ?= 10
.PHONY: failover
failover: test-deps
	WHARF_FAILOVER_KILLS=$(FAILOVER_KILLS) $(GO) test -count=1 -timeout 30m -run '^TestConformanceFailoverJMSUnderLoad$$' -v ./conformance/

bench:
	$(GO) test -run='^$$' -bench=. -benchmem -count=1 ./engine/ ./protocols/... ./storage/...

# Isolation under load (issue 17 item 4): the innocent producer/consumer
# pair's throughput alone and beside a stalled consumer and a flow-controlled
# flood, in interleaved windows; prints the ratios, fails below 0.9. The
# functional forms of these tests run in `make test`.
ISOLATION_WINDOW ?= 3s
ISOLATION_REPEATS ?= 5
isolation:
	WHARF_ISOLATION_MEASURE=1 WHARF_ISOLATION_WINDOW=$(ISOLATION_WINDOW) WHARF_ISOLATION_REPEATS=$(ISOLATION_REPEATS) \
		$(GO) test -count=1 -timeout 30m -run='^TestIsolationMeasured$$' -v ./bench/

# The soak (issue 17 item 5): a wharf process under a steady mixed load for
# DURATION, sampled every SOAK_INTERVAL (10s from 10 minutes on, else 2s),
# then drained; soak.csv and soak.svg go to SOAK_OUT. A 2-minute form runs
# in `make test` (TestSoak).
DURATION ?= 1h
SOAK_OUT ?= soak-results
SOAK_INTERVAL ?=
soak:
	WHARF_SOAK_DURATION=$(DURATION) WHARF_SOAK_OUT=$(abspath $(SOAK_OUT)) WHARF_SOAK_INTERVAL=$(SOAK_INTERVAL) \
		$(GO) test -count=1 -timeout 0 -run='^TestSoak$$' -v ./bench/

# The web console's screenshots in docs/console/ (the README shows them),
# taken by headless Chromium of a test broker with some traffic.
console-screenshots:
	WHARF_CONSOLE_SCREENSHOTS=$(CURDIR)/docs/console $(GO) test -count=1 -run='^TestConsoleScreenshots$$' ./protocols/http/

# The engine alone (BenchmarkEngine*, engine/) and STOMP over loopback
# (BenchmarkSTOMPQueue, bench/), as the README says.
bench-engine:
	$(GO) test -run='^$$' -bench='BenchmarkEngine|BenchmarkSTOMPQueue$$' -benchmem -count=5 ./engine/ ./bench/

# bench-store: the same persistent OpenWire workloads on Wharf's KahaDB, LSM
# and JDBC (PostgreSQL) stores and on ActiveMQ 5.17's JDBC store on the same
# private PostgreSQL cluster, one broker after the other (bench/store);
# writes bench/results/<date>-bench-store.md and .svg. About 10 minutes.
.PHONY: bench-store
bench-store:
	$(GO) run ./bench/store

# Wharf against ActiveMQ 5.17, Mosquitto and (when Debian's rabbitmq-server
# is installed) RabbitMQ 3.10 on this machine, the same `wharf bench`
# scenarios against each in turn for ROUNDS rounds (bench/compare), with
# latency rows at fixed rates and rows against the disk's fsync rate:
# installs what is missing when root (not RabbitMQ), starts and stops every
# broker itself, prints the table and writes
# bench/compare/results/<date>.json and .svg.
# About 30 minutes on 2 cores (a 28-minute budget: -budget).
ROUNDS ?= 3
.PHONY: bench-compare
bench-compare:
	$(GO) run ./bench/compare -rounds $(ROUNDS)

# wharf conform (docs/conform.md): its Go tests (every case against an
# in-process Wharf; the command against wharf run and, when installed,
# Debian's ActiveMQ 5.17, with the differential between them), and
# conform-ref, the command against ActiveMQ as conformance-ref starts it
# (CONFORM_FLAGS adds flags, e.g. CONFORM_FLAGS='--junit conform.xml').
.PHONY: conform conform-ref
conform:
	$(GO) test -count=1 -run 'TestConformanceCases|TestWharfConform' ./conformance/ ./cmd/wharf/

conform-ref: build
	AMQ_RUN='./bin/wharf conform --url stomp://$$WHARF_CONFORMANCE_STOMP_ADDR --url "stomp://$$WHARF_CONFORMANCE_STOMP_SMALL_FRAME_ADDR?wireFormat.maxFrameSize=4096" --url tcp://$$WHARF_CONFORMANCE_OPENWIRE_ADDR --url mqtt://$$WHARF_CONFORMANCE_MQTT_ADDR --url "mqtt://$$WHARF_CONFORMANCE_MQTT_SMALL_ADDR?wireFormat.maxFrameSize=1024" --url "mqtt://$$WHARF_CONFORMANCE_MQTT_DOLLAR_ADDR?transport.publishDollarTopics=true" $(CONFORM_FLAGS)' \
		conformance/activemq/run.sh

# The conformance suites against Debian's ActiveMQ 5.17, the reference:
# the cases of wharf conform (conform-ref), then the JMS suite and the
# STOMP tests still in conformance/ (conformance/activemq/run.sh starts
# ActiveMQ on loopback, installing the activemq package when missing, runs
# them, and stops it), then the security suite.
.PHONY: conformance-ref
conformance-ref: conform-ref
	conformance/activemq/run.sh
	conformance/activemq/security/run.sh

clean:
	rm -rf bin data
