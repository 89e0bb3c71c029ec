# Wharf. `make run` starts a broker on its defaults; `make test` runs every test.
GO      ?= go
PKGS    := ./...
# Engine and protocols run under the race detector (STYLE.md §9).
RACE_PKGS := ./engine/... ./protocols/... ./storage/... ./conformance/...
FUZZTIME ?= 10s

.PHONY: build run test check vet fmt race unit fuzz fuzz-long bench bench-engine tools clean

build:
	$(GO) build -o bin/wharf ./cmd/wharf

run: build
	./bin/wharf run

# The README's test command, and what .ci/run calls: formatting, vet, the
# whole suite with -race, and a short fuzz smoke run of every decoder.
test: fmt vet race fuzz

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
	./engine/selector:FuzzSelectorParse

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name ($(FUZZTIME))"; \
		$(GO) test -run='^$$' -fuzz="^$$name$$" -fuzztime=$(FUZZTIME) $$pkg; \
	done

fuzz-long:
	$(MAKE) fuzz FUZZTIME=5m

bench:
	$(GO) test -run='^$$' -bench=. -benchmem -count=1 ./engine/ ./protocols/... ./storage/...

bench-engine:
	$(GO) test -run='^$$' -bench='BenchmarkEngine|BenchmarkSTOMP' -benchmem -count=5 ./engine/ ./protocols/stomp/

clean:
	rm -rf bin data
