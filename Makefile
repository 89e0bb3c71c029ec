# Wharf. `make run` starts a broker on its defaults; `make test` runs every test.
GO      ?= go
PKGS    := ./...
# Engine and protocols run under the race detector (STYLE.md §9).
RACE_PKGS := ./engine/... ./protocols/... ./storage/... ./conformance/...
FUZZTIME ?= 10s

.PHONY: build run test test-deps check vet fmt race unit fuzz fuzz-long bench bench-engine tools clean

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
	if [ -z "$$pkgs" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing$$pkgs"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$pkgs >/dev/null || \
		{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$pkgs >/dev/null; } || \
		echo "could not install$$pkgs: the AMQP client tests (and, without python3-stomp, the confirmed-ack kill test) will skip"; \
	else echo "missing$$pkgs: the AMQP client tests (and, without python3-stomp, the confirmed-ack kill test) will skip"; fi
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
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

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
	./protocols/transport/ws/wire:FuzzWSWireDecode \
	./protocols/transport/ws/wire:FuzzWSWireUTF8 \
	./protocols/openwire/wire:FuzzOpenWireWireDecodeTight \
	./protocols/openwire/wire:FuzzOpenWireWireDecodeLoose \
	./storage/kahadb/command:FuzzKahaDBCommandDecode \
	./storage/kahadb:FuzzKahaDBIndex \
	./engine/selector:FuzzSelectorParse \
	./engine/message:FuzzMessageBinaryDecode

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

fuzz-long:
	$(MAKE) fuzz FUZZTIME=5m

bench:
	$(GO) test -run='^$$' -bench=. -benchmem -count=1 ./engine/ ./protocols/... ./storage/...

bench-engine:
	$(GO) test -run='^$$' -bench='BenchmarkEngine|BenchmarkSTOMP' -benchmem -count=5 ./engine/ ./protocols/stomp/

# Wharf against ActiveMQ 5.17 and Mosquitto on this machine, the same
# `wharf bench` scenarios against each in turn for ROUNDS rounds (bench/compare):
# installs what is missing when root, starts and stops every broker itself,
# prints the table and writes bench/compare/results/<date>.json and .svg.
# Under 15 minutes on 2 cores.
ROUNDS ?= 3
.PHONY: bench-compare
bench-compare:
	$(GO) run ./bench/compare -rounds $(ROUNDS)

# The conformance suites (STOMP, JMS) against Debian's ActiveMQ 5.17, the
# reference: conformance/activemq/run.sh starts it on loopback (installing
# the activemq package when missing), runs them, and stops it.
.PHONY: conformance-ref
conformance-ref:
	conformance/activemq/run.sh

clean:
	rm -rf bin data
