# Build, demo and test cordon. `make demo` runs the main job; `make test` runs every test.
# Cargo's target dir lives outside the clone so repeated runs (and CI on the same machine) reuse it.

export CARGO_TARGET_DIR ?= $(HOME)/.cache/cordon-target
# The checkout `cordon new`/`cordon build` take the contract and SDKs from: this one. Without it the
# binary uses the checkout it was compiled in, and with the target dir shared by several checkouts
# cargo may reuse a build made in another (its sources compare as unchanged), whose path is baked in.
export CORDON_SOURCE_ROOT ?= $(CURDIR)
GUEST_DIR := $(CARGO_TARGET_DIR)/wasm32-wasip2/guest
CORDON := $(CARGO_TARGET_DIR)/debug/cordon
# Python environment for the MCP client tests, kept outside the clone like the target dir.
TEST_VENV := $(HOME)/.cache/cordon-test-venv
# The cache directory the tests share, kept between runs like the target dir: compiled components
# and Python/JavaScript build outputs, each keyed by all that makes it (tests/integration/support).
TEST_CACHE_HOME := $(HOME)/.cache/cordon-test-cache

# Plugins shipped in plugins/<name>/, built to plugins/<name>.wasm.
BUNDLED := fs guard redact http_fetch session_notes finish_line
# Bundled plugins written in Python (plugins/<name>/app.py), built with componentize-py.
PYTHON_PLUGINS := csv_query
PYTHON_WASM := $(addprefix $(GUEST_DIR)/,$(addsuffix .wasm,$(PYTHON_PLUGINS)))
# Python test fixtures (tests/fixtures_python/<name>/app.py).
PYTHON_FIXTURES := $(notdir $(wildcard tests/fixtures_python/*))
PYTHON_FIXTURE_WASM := $(addprefix $(GUEST_DIR)/fixture_,$(addsuffix .wasm,$(PYTHON_FIXTURES)))
BUILD_VENV := $(HOME)/.cache/cordon-build-venv
# Bundled plugins in JavaScript (plugins/<name>/app.js) and C (plugins/<name>/*.c), built by
# `cordon build`: componentize-js from sdk/js/package-lock.json, Zig (PyPI ziglang) in the build venv.
JS_PLUGINS := json_query
C_PLUGINS := hash
SDK_PLUGIN_WASM := $(addprefix $(GUEST_DIR)/,$(addsuffix .wasm,$(JS_PLUGINS) $(C_PLUGINS)))
# JavaScript test fixtures (tests/fixtures_js/<name>/app.js).
JS_FIXTURES := $(notdir $(wildcard tests/fixtures_js/*))
JS_FIXTURE_WASM := $(addprefix $(GUEST_DIR)/fixture_,$(addsuffix .wasm,$(JS_FIXTURES)))
# C test fixtures (tests/fixtures_c/<name>/*.c).
C_FIXTURES := $(notdir $(wildcard tests/fixtures_c/*))
C_FIXTURE_WASM := $(addprefix $(GUEST_DIR)/fixture_,$(addsuffix .wasm,$(C_FIXTURES)))
# Components built with their languages' own toolchains for WIT worlds of their own, with no cordon
# SDK (tests/fixtures_plain/py_WORLD: componentize-py; js_WORLD: componentize-js; qjs_WORLD:
# componentize-qjs; `_` in WORLD is `-` in the WIT world's name). A fixture's own
# WIT packages (wit/deps/, e.g. wasi:config) are used beside the WASI ones.
PLAIN_FIXTURE_WASM := $(addprefix $(GUEST_DIR)/plain_,$(addsuffix .wasm,$(notdir $(wildcard tests/fixtures_plain/*))))
JS_TOOLCHAIN := sdk/js/node_modules/.installed
ZIG_TOOLCHAIN := $(BUILD_VENV)/.zig-installed
# Misbehaving plugins the tests load from the target dir (never from plugins/).
FIXTURES := $(notdir $(wildcard tests/fixtures/*))
FIXTURE_PACKAGES := $(addprefix fixture_,$(FIXTURES))
# The host's crates: the runtime library, the agent loop, the MCP server, the scaffolding, telemetry, and the
# `cordon` binary on top (crates/).
HOST_CRATES := -p cordon-runtime -p cordon-agent -p cordon-mcp -p cordon-scaffold -p cordon-distribution -p cordon-telemetry -p cordon

.PHONY: build install demo test test-rust test-mcp test-deploy mcp-clients registry-tools test-real-model fuzz bench toolchain host plugins guests fixtures lint clean

build: host plugins

toolchain:
	@command -v cargo >/dev/null || { echo "error: cargo not found; install Rust with rustup (https://rustup.rs)" >&2; exit 1; }
	@rustup target list --installed | grep -qx wasm32-wasip2 || rustup target add wasm32-wasip2

host: toolchain
	cargo build -p cordon

# `cordon` on PATH: an optimised build (the release profile) installed as $(PREFIX)/bin/cordon,
# the same as `cargo install --locked --path crates/cordon`. PREFIX=/usr/local for every user;
# CARGO_INSTALL_ARGS=--debug installs the development build instead (quicker; what the tests use).
PREFIX ?= $(HOME)/.local
install: toolchain
	cargo install --locked --force --path crates/cordon --root $(PREFIX) $(CARGO_INSTALL_ARGS)
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; *) echo "note: $(PREFIX)/bin is not on PATH; add it (e.g. export PATH=\"$(PREFIX)/bin:\$$PATH\") to run cordon by name" ;; esac

plugins: toolchain $(PYTHON_WASM) $(SDK_PLUGIN_WASM)
	cargo build --target wasm32-wasip2 --profile guest $(addprefix -p ,$(BUNDLED))
	@for name in $(BUNDLED) $(PYTHON_PLUGINS) $(JS_PLUGINS) $(C_PLUGINS); do cp $(GUEST_DIR)/$$name.wasm plugins/$$name.wasm; done

# A Python plugin is rebuilt when its app, the SDK or the contract changes.
$(GUEST_DIR)/%.wasm: plugins/%/app.py $(wildcard sdk/python/cordon_sdk/*.py) wit/plugin-0.3.0/plugin.wit $(BUILD_VENV)/.installed
	@mkdir -p $(GUEST_DIR)
	$(BUILD_VENV)/bin/componentize-py -d wit/plugin-0.3.0 -w cordon-plugin componentize app -p plugins/$* -p sdk/python -o $@

$(GUEST_DIR)/fixture_%.wasm: tests/fixtures_python/%/app.py $(wildcard sdk/python/cordon_sdk/*.py) wit/plugin-0.3.0/plugin.wit $(BUILD_VENV)/.installed
	@mkdir -p $(GUEST_DIR)
	$(BUILD_VENV)/bin/componentize-py -d wit/plugin-0.3.0 -w cordon-plugin componentize app -p tests/fixtures_python/$* -p sdk/python -o $@

$(BUILD_VENV)/.installed: sdk/python/requirements-build.txt
	@command -v python3 >/dev/null || { echo "error: python3 is needed to build the Python plugins" >&2; exit 1; }
	python3 -m venv $(BUILD_VENV)
	$(BUILD_VENV)/bin/pip install --quiet --disable-pip-version-check -r sdk/python/requirements-build.txt
	touch $@

# Its world may import WASI interfaces (or include `wasi:cli/command`: a Python command); their
# WIT comes from a pinned toolchain (jco's copy), as for the JavaScript ones below.
JCO_WASI_WIT := sdk/js/node_modules/@bytecodealliance/jco/lib/wit/builtin/0.2.12
$(GUEST_DIR)/plain_py_%.wasm: tests/fixtures_plain/py_%/app.py tests/fixtures_plain/py_%/wit/world.wit $(BUILD_VENV)/.installed | $(JS_TOOLCHAIN)
	@mkdir -p $(GUEST_DIR)
	rm -rf $(GUEST_DIR)/plain-py-wit/$* && mkdir -p $(GUEST_DIR)/plain-py-wit/$*
	cp tests/fixtures_plain/py_$*/wit/world.wit $(GUEST_DIR)/plain-py-wit/$*/
	for dep in wasi-cli wasi-clocks wasi-filesystem wasi-io wasi-random wasi-sockets; do mkdir -p $(GUEST_DIR)/plain-py-wit/$*/deps/$$dep && cp $(JCO_WASI_WIT)/$$dep/package.wit $(GUEST_DIR)/plain-py-wit/$*/deps/$$dep/; done
	$(BUILD_VENV)/bin/componentize-py -d $(GUEST_DIR)/plain-py-wit/$* -w $(subst _,-,$*) componentize app -p tests/fixtures_plain/py_$* -o $@

$(GUEST_DIR)/plain_js_%.wasm: tests/fixtures_plain/js_%/app.js tests/fixtures_plain/js_%/wit/world.wit | $(JS_TOOLCHAIN)
	@mkdir -p $(GUEST_DIR)
	rm -rf $(GUEST_DIR)/plain-js-wit/$* && mkdir -p $(GUEST_DIR)/plain-js-wit/$*
	cp tests/fixtures_plain/js_$*/wit/world.wit $(GUEST_DIR)/plain-js-wit/$*/
	for dep in wasi-cli wasi-clocks wasi-filesystem wasi-io wasi-random wasi-sockets; do mkdir -p $(GUEST_DIR)/plain-js-wit/$*/deps/$$dep && cp $(JCO_WASI_WIT)/$$dep/package.wit $(GUEST_DIR)/plain-js-wit/$*/deps/$$dep/; done
	if [ -d tests/fixtures_plain/js_$*/wit/deps ]; then cp -r tests/fixtures_plain/js_$*/wit/deps/. $(GUEST_DIR)/plain-js-wit/$*/deps/; fi
	sdk/js/node_modules/.bin/componentize-js tests/fixtures_plain/js_$*/app.js --wit $(GUEST_DIR)/plain-js-wit/$* -n $* -d http -d fetch-event -o $@

# QuickJS components (tests/fixtures_plain/qjs_WORLD): componentize-qjs with its default runtime,
# whose exports are `async func`s (the component model's async ABI).
$(GUEST_DIR)/plain_qjs_%.wasm: tests/fixtures_plain/qjs_%/app.js tests/fixtures_plain/qjs_%/wit/world.wit | $(JS_TOOLCHAIN)
	@mkdir -p $(GUEST_DIR)
	sdk/js/node_modules/.bin/componentize-qjs --wit tests/fixtures_plain/qjs_$*/wit --js tests/fixtures_plain/qjs_$*/app.js -n $(subst _,-,$*) -o $@

# JavaScript and C plugins are built with `cordon build` (so the host is built first), rebuilt
# when their sources, the SDK or the contract change. `--force`: the guest directory is the
# Makefile's own, so whatever is there under the name (a build from before the build records) is ours.
# GUEST_BUILD (output dir, project) and GUEST_BUILD_NEEDS are what builds them and what must be made
# first: tests/guests/build.rs passes the scaffold's own builder (`cargo run --example build_guest`)
# instead, so a plain `cargo test` builds no second host.
GUEST_BUILD ?= $(CORDON) --plugins $(1) build --force $(2)
GUEST_BUILD_NEEDS ?= host
$(GUEST_DIR)/json_query.wasm: $(wildcard plugins/json_query/*.js)
$(GUEST_DIR)/%.wasm: plugins/%/app.js sdk/js/cordon.js sdk/js/session.js sdk/js/build.mjs wit/plugin-0.3.0/plugin.wit | $(GUEST_BUILD_NEEDS) $(JS_TOOLCHAIN)
	@mkdir -p $(GUEST_DIR)
	$(call GUEST_BUILD,$(GUEST_DIR),plugins/$*)

$(GUEST_DIR)/fixture_%.wasm: tests/fixtures_js/%/app.js sdk/js/cordon.js sdk/js/session.js sdk/js/build.mjs wit/plugin-0.3.0/plugin.wit | $(GUEST_BUILD_NEEDS) $(JS_TOOLCHAIN)
	@mkdir -p $(GUEST_DIR)/js-fixtures
	$(call GUEST_BUILD,$(GUEST_DIR)/js-fixtures,tests/fixtures_js/$*)
	mv $(GUEST_DIR)/js-fixtures/$*.wasm $@

C_SDK := $(wildcard sdk/c/*.c sdk/c/*.h)
$(GUEST_DIR)/hash.wasm: $(wildcard plugins/hash/*.c plugins/hash/*.h) $(C_SDK) wit/plugin-0.3.0/plugin.wit | $(GUEST_BUILD_NEEDS) $(ZIG_TOOLCHAIN)
	@mkdir -p $(GUEST_DIR)
	$(call GUEST_BUILD,$(GUEST_DIR),plugins/hash)

$(GUEST_DIR)/fixture_%.wasm: tests/fixtures_c/%/app.c $(C_SDK) wit/plugin-0.3.0/plugin.wit | $(GUEST_BUILD_NEEDS) $(ZIG_TOOLCHAIN)
	@mkdir -p $(GUEST_DIR)/c-fixtures
	$(call GUEST_BUILD,$(GUEST_DIR)/c-fixtures,tests/fixtures_c/$*)
	mv $(GUEST_DIR)/c-fixtures/$*.wasm $@

$(JS_TOOLCHAIN): sdk/js/package-lock.json
	@command -v npm >/dev/null || { echo "error: npm (Node.js 20) is needed to build the JavaScript plugins" >&2; exit 1; }
	cd sdk/js && npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(ZIG_TOOLCHAIN): sdk/c/requirements-build.txt $(BUILD_VENV)/.installed
	$(BUILD_VENV)/bin/pip install --quiet --disable-pip-version-check -r sdk/c/requirements-build.txt
	touch $@

# One cargo invocation builds the bundled plugins and every fixture, once per test run, into
# GUEST_DIR (`guests`, what tests/guests/build.rs runs); `fixtures` also copies the bundled ones
# into plugins/.
guests: toolchain $(PYTHON_WASM) $(PYTHON_FIXTURE_WASM) $(SDK_PLUGIN_WASM) $(JS_FIXTURE_WASM) $(C_FIXTURE_WASM) $(PLAIN_FIXTURE_WASM)
	cargo build --target wasm32-wasip2 --profile guest $(addprefix -p ,$(BUNDLED) $(FIXTURE_PACKAGES))

fixtures: guests
	@for name in $(BUNDLED) $(PYTHON_PLUGINS) $(JS_PLUGINS) $(C_PLUGINS); do cp $(GUEST_DIR)/$$name.wasm plugins/$$name.wasm; done

demo: build
	@CORDON=$(CORDON) ./demo.sh

test: test-rust test-mcp test-deploy

test-rust: host fixtures registry-tools
	CORDON_GUEST_DIR=$(GUEST_DIR) CORDON_SCAFFOLD_TARGET=$(HOME)/.cache/cordon-scaffold-target CORDON_TEST_CACHE_HOME=$(TEST_CACHE_HOME) cargo test $(HOST_CRATES) -p cordon-sdk -p fs -p redact -p session_notes -p finish_line

# A real OCI registry (CNCF Distribution), `oras push` and `wkg` (built from crates.io, several minutes
# the first time), for the `cordon add`/`push` tests: installed into ~/.cache/cordon-tools by
# tests/registry/install.sh, which fails loudly when it cannot.
registry-tools:
	bash tests/registry/install.sh >/dev/null

# `cordon serve` against third-party MCP clients: the Python SDK, the Inspector CLI and the
# conformance suite (see tests/mcp/).
test-mcp: host fixtures mcp-clients
	CORDON_BIN=$(CORDON) CORDON_GUEST_DIR=$(GUEST_DIR) $(TEST_VENV)/bin/python -m pytest tests/mcp -q

# The deployment files (deploy/): the Kubernetes manifests against the Kubernetes schemas and the
# real binary, the Containerfile linted; and `make install` into a scratch PREFIX (see tests/deploy/).
test-deploy: host fixtures $(TEST_VENV)/.installed
	CORDON_BIN=$(CORDON) CORDON_GUEST_DIR=$(GUEST_DIR) $(TEST_VENV)/bin/python -m pytest tests/deploy -q

mcp-clients: $(TEST_VENV)/.installed tests/mcp/node_modules/.installed

$(TEST_VENV)/.installed: tests/mcp/requirements.txt tests/deploy/requirements.txt
	@command -v python3 >/dev/null || { echo "error: python3 is needed for the MCP client tests" >&2; exit 1; }
	python3 -m venv $(TEST_VENV)
	$(TEST_VENV)/bin/pip install --quiet --disable-pip-version-check -r tests/mcp/requirements.txt -r tests/deploy/requirements.txt
	touch $@

tests/mcp/node_modules/.installed: tests/mcp/package-lock.json
	@command -v npm >/dev/null || { echo "error: npm (Node.js) is needed for the MCP client tests" >&2; exit 1; }
	cd tests/mcp && npm install --no-audit --no-fund --loglevel=error
	touch $@

# Opt-in, not part of `make test` or CI: `cordon run` on seven small tasks against a real model
# (Qwen2.5-Coder-1.5B-Instruct; REAL_MODEL=qwen0.5b for the 0.5B) served by llama.cpp's llama-server,
# both fetched and built into ~/.cache/cordon-real-model on the first run (docs/real-model.md).
# `CORDON_BIN=/path/to/cordon make test-real-model` measures another build; REAL_MODEL_ARGS passes
# flags to the runner, e.g. REAL_MODEL_ARGS="--tasks list,find --keep"; REAL_MODEL_BEFORE=old.json
# (reports of earlier runs, e.g. of an older build) ends with a before/after table (compare.py).
REAL_MODEL ?= qwen1.5b
REAL_MODEL_JSON ?= $(HOME)/.cache/cordon-real-model/last-run.json
test-real-model: toolchain
ifndef CORDON_BIN
	cargo build -p cordon
endif
	cargo build --target wasm32-wasip2 --profile guest -p fs -p guard -p fixture_many_tools
	CORDON_BIN=$(or $(CORDON_BIN),$(CORDON)) CORDON_GUEST_DIR=$(GUEST_DIR) \
		python3 tests/real_model/run.py --setup --model $(REAL_MODEL) --json $(REAL_MODEL_JSON) $(REAL_MODEL_ARGS)
ifdef REAL_MODEL_BEFORE
	python3 tests/real_model/compare.py --before $(REAL_MODEL_BEFORE) --after $(REAL_MODEL_JSON)
endif

# The property tests of tests/integration/fuzz.rs with many more cases than CI runs.
fuzz: host
	CORDON_GUEST_DIR=$(GUEST_DIR) PROPTEST_CASES=$${PROPTEST_CASES:-20000} cargo test -p cordon --test integration fuzz -- --test-threads 2

# One run of every benchmark (crates/cordon/benches/suite/), printed and written to BENCHMARKS.md. ripgrep,
# which the real-repository section compares with, is installed for it into a cache directory (it
# is not a dependency of cordon). The release build (what `make install` installs) is built too,
# for the section that sets it beside the development build: ~25 min the first time on 2 cores.
BENCH_TOOLS := $(HOME)/.cache/cordon-bench-tools
bench: host fixtures $(BENCH_TOOLS)/bin/rg
	cargo build -p cordon -p mcp_echo_server
	cargo build --release --locked -p cordon
	CORDON_GUEST_DIR=$(GUEST_DIR) CORDON_BIN=$(CORDON) CORDON_MCP_ECHO_BIN=$(CARGO_TARGET_DIR)/debug/mcp_echo_server \
		CORDON_RELEASE_BIN=$(CARGO_TARGET_DIR)/release/cordon \
		CORDON_BENCH_RG=$(BENCH_TOOLS)/bin/rg cargo bench -p cordon --profile dev --bench suite

$(BENCH_TOOLS)/bin/rg:
	CARGO_TARGET_DIR=$(BENCH_TOOLS)/target cargo install ripgrep --version 15.2.0 --locked --root $(BENCH_TOOLS)

lint: toolchain
	cargo fmt --all --check
	CORDON_GUEST_DIR=$(GUEST_DIR) cargo clippy $(HOST_CRATES) --all-targets -- -D warnings
	cargo clippy --target wasm32-wasip2 $(addprefix -p ,cordon-sdk $(BUNDLED) $(FIXTURE_PACKAGES)) -- -D warnings

clean:
	rm -f plugins/*.wasm
	cargo clean
