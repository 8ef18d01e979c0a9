# partnersim — the two commands a newcomer needs are `make run` and `make test`.
GO ?= go

.PHONY: run test lint lint-chart bench bench-http bench-scale bench-shards build fuzz mutants dist image

## run: start the sandbox on 127.0.0.1:8080 with the default fixtures (state in ./partnersim.db);
## ARGS are serve's flags: make run ARGS='--addr 127.0.0.1:9090'
ARGS ?=
run:
	$(GO) run ./cmd/partnersim serve $(ARGS)

## build: the partnersim binary in ./bin
build:
	$(GO) build -buildvcs=auto -o bin/partnersim ./cmd/partnersim

## dist: release archives in ./dist — the binary for linux, darwin and windows on amd64 and
## arm64, CGO off, each with the README (tar.gz; zip for windows), and checksums.txt
dist:
	$(GO) run ./internal/release -out dist

## image: the container image (Containerfile): the static binary built here, on scratch, so it
## builds offline; IMAGE_TOOL=docker to use docker
IMAGE_TOOL ?= podman
IMAGE ?= partnersim:dev
image:
	rm -rf dist/image && mkdir -p dist/image/data
	CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=auto -ldflags='-s -w' -o dist/image/partnersim ./cmd/partnersim
	$(IMAGE_TOOL) build -f deploy/Containerfile -t $(IMAGE) dist/image

## test: vet, format check, every test with the race detector (incl. the interop, parity and examples/ci modules)
test: lint
	$(GO) test -race -count=1 -timeout 30m ./...
	@if [ -d internal/interop ]; then cd internal/interop && $(GO) test -race -count=1 -timeout 30m ./...; fi
	@if [ -d internal/parity ]; then cd internal/parity && $(GO) vet ./... && $(GO) test -race -count=1 -timeout 30m ./...; fi
	@if [ -d examples/ci ]; then cd examples/ci && $(GO) test -race -count=1 -timeout 30m ./...; fi

## lint: go vet, a gofmt check, staticcheck, actionlint and the Helm chart (pinned; fetched through the module proxy)
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
ACTIONLINT ?= github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
lint:
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	@if [ -d examples/ci ]; then cd examples/ci && $(GO) vet ./...; fi
	sh examples/pipelines/actionlint.sh "$(GO) run $(ACTIONLINT)"
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(MAKE) --no-print-directory lint-chart

## lint-chart: the Helm chart (deploy/chart/partnersim) linted, then rendered for each Kubernetes
## minor still supported and every manifest validated by kubeconform in strict mode (unknown
## fields refused). Helm and kubeconform are pinned and built through the module proxy; the
## schemas come from the same release's swagger.json in the k8s.io/kubernetes module
## (internal/kubeschema), never from the web.
HELM ?= helm.sh/helm/v4/cmd/helm@v4.3.1
KUBECONFORM ?= github.com/yannh/kubeconform/cmd/kubeconform@v0.8.0
KUBE_VERSIONS ?= 1.35.4 1.36.3 1.37.2
CHART = deploy/chart/partnersim
lint-chart:
	@schemas=$$(mktemp -d) && trap 'rm -rf "$$schemas"' EXIT && \
	for v in $(KUBE_VERSIONS); do $(GO) run ./internal/kubeschema -kubernetes $$v -out "$$schemas" || exit 1; done && \
	for values in $(CHART)/ci/*-values.yaml; do \
	  $(GO) run $(HELM) lint --strict --quiet $(CHART) -f $$values || exit 1; \
	  for v in $(KUBE_VERSIONS); do \
	    echo "helm template $(CHART) -f $$values --kube-version $$v | kubeconform -strict"; \
	    $(GO) run $(HELM) template lint $(CHART) -f $$values --kube-version $$v > "$$schemas/chart.yaml" || exit 1; \
	    $(GO) run $(KUBECONFORM) -strict -summary -kubernetes-version $$v -schema-location "$$schemas" "$$schemas/chart.yaml" || exit 1; \
	  done; \
	done

## bench: the Go benchmarks behind BENCHMARKS.md
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## bench-http: the reviewer's measurement (BENCHMARKS.md's targets table): `partnersim serve` as the
## README starts it, wrk per URL alternated with a bare echo server answering the same bytes,
## the mix, `partnersim proxy` with nginx's plain proxy_pass as its reference (skipped without
## nginx), deliveries, and the 100k + 1M build's CPU against the baseline commit's, three
## alternated pairs of `fixtures build` (decisions D14; the baseline's binary is built once from
## git into the work folder; -baseline COMMIT names another); ~13 minutes on 2 cores. Needs wrk
## (Debian: sudo apt-get install wrk). BENCH_HTTP_FLAGS='-only default' runs one part (default,
## large, build — large's build against the baseline alone —, varied — large's rows over many
## URLs without its builds —, mix, proxy, deliveries).
BENCH_HTTP_FLAGS ?=
bench-http: build
	@command -v wrk >/dev/null 2>&1 || { echo "bench-http needs wrk: sudo apt-get install wrk (Debian/Ubuntu), brew install wrk (macOS)"; exit 2; }
	$(GO) run ./internal/benchhttp -bin bin/partnersim $(BENCH_HTTP_FLAGS)

## bench-shards: SCALING.md's table — the mix on three institutions at once against one process,
## that process behind nginx, and three shards behind nginx (`serve --shard-map`, the configuration
## of `partnersim shard-map --nginx`); ~1 minute. Needs nginx (Debian: sudo apt-get install nginx).
## BENCH_SHARDS_DURATION (default 10s) and BENCH_SHARDS_CONNECTIONS (per institution, default 8).
BENCH_SHARDS_DURATION ?= 10s
BENCH_SHARDS_CONNECTIONS ?= 8
bench-shards:
	@command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || { echo "bench-shards needs nginx: sudo apt-get install nginx"; exit 2; }
	PARTNERSIM_BENCH_SHARDS=1 PARTNERSIM_BENCH_SHARDS_DURATION=$(BENCH_SHARDS_DURATION) PARTNERSIM_BENCH_SHARDS_CONNECTIONS=$(BENCH_SHARDS_CONNECTIONS) \
		$(GO) test -count=1 -v -run '^TestBenchShards$$' -timeout 20m ./cmd/partnersim

## bench-scale: how cost grows — builds and serves 10k, 100k and 1M users (ten orders each) with
## `partnersim fixtures build` and `partnersim serve`: build wall and CPU, peak RSS, store size,
## ready after a restart and the random detail, list and mix ratios per decade; one table, and
## the chart in docs/bench-scale.svg; each size is built twice, the run of least CPU counted.
## ~20 minutes on 2 cores, ~22 the first time (the sets are
## generated once into $TMPDIR/partnersim-bench-scale, ~6 GB, and kept); about 20 GB of disk.
BENCH_SCALE_SIZES ?= 10000,100000,1000000
BENCH_SCALE_FLAGS ?=
bench-scale: build
	$(GO) run ./internal/benchhttp -bin bin/partnersim -dir $${TMPDIR:-/tmp}/partnersim-bench-scale -scale $(BENCH_SCALE_SIZES) -svg docs/bench-scale.svg $(BENCH_SCALE_FLAGS)

## fuzz: run each fuzz target briefly (FUZZTIME=10s by default). A failure that recorded no
## crasher under testdata/fuzz (the engine's "context deadline exceeded" when time runs out
## mid-minimisation) is retried, twice at most; a recorded crasher always fails.
FUZZTIME ?= 10s
FUZZFLAGS = -run '^$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$f"; \
	    for try in 1 2 3; do \
	      $(GO) test $(FUZZFLAGS) -fuzz "^$$f$$" $$pkg && break; \
	      if [ -n "$$(git status --porcelain -- $$dir/testdata/fuzz/$$f 2>/dev/null)" ]; then \
	        echo "crasher recorded in $$dir/testdata/fuzz/$$f"; exit 1; fi; \
	      [ $$try = 3 ] && exit 1; \
	      echo "retrying $$f: the failure recorded no crasher"; \
	    done; \
	  done; \
	done

## mutants: mutation testing of the simulator with the contract suite (go test ./features) as the
## killing test: gremlins lists the mutants, features/mutants applies each through go test
## -overlay. A sample per package (~30 min on 2 cores); MUTANTS_FLAGS=-all tests every covered
## mutant, MUTANTS_FLAGS='-only netguard' one area. Survivors are listed in mutants-report.txt.
MUTANTS_FLAGS ?=
mutants:
	$(GO) run ./features/mutants -report mutants-report.txt $(MUTANTS_FLAGS)
