# code-sandbox: a remote MCP server giving AI clients a persistent Linux
# sandbox, as FastCGI programs behind lighttpd, Caddy, nginx or Apache.
#
#   make            build the programs into build/bin
#   make run        install what is missing, start Docker, build the sandbox
#                   image, create .env, and serve through lighttpd
#   make test       the same set-up, then every test; last line "N passed, N failed, N skipped"
#   make bench      benchmarks, printed as ratios against the raw Docker API
#   make fuzz       every libFuzzer target (tests/fuzz/fuzz_*.c), FUZZ_SECONDS
#                   each (default 60; make test runs them 3 s), or those named
#                   in FUZZ_TARGETS (e.g. FUZZ_TARGETS="register file_stat")
#   make soak       200 clients of mixed traffic, lighttpd then Caddy, SOAK_MINUTES
#   make install    PREFIX=/usr/local DESTDIR= (units and configs get the paths)
#   make install-systemd   make install, then the units in UNITDIR, the user
#                   USER (in the docker group), SYSCONFDIR/code-sandbox/env,
#                   and a systemd reload
#
# SAN=1 builds with AddressSanitizer and UndefinedBehaviorSanitizer into
# build/san (the tests use that build).

PREFIX	?= /usr/local
SYSCONFDIR ?= /etc
UNITDIR	?= $(SYSCONFDIR)/systemd/system
# The user the programs and lighttpd run as (make install-systemd makes it).
USER_NAME ?= code-sandbox
LIBDIR	 = $(PREFIX)/lib
SBINDIR	 = $(PREFIX)/sbin
DATADIR	 = $(PREFIX)/share
# V=1 shows the commands.
ifneq ($(V),1)
Q	 = @
endif
DESTDIR	?=
CC	?= cc
PKGS	 = fcgi json-c libcurl libssl libcrypto sqlite3

ifeq ($(SAN),1)
BUILD	?= build/san
SANFLAGS = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
else ifeq ($(FUZZ),1)
# The fuzz targets: clang, libFuzzer, ASan and UBSan, into build/fuzz.
BUILD	?= build/fuzz
CC	 = clang
SANFLAGS = -fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined \
	   -fno-omit-frame-pointer -Wno-format-nonliteral
else
BUILD	?= build
SANFLAGS =
endif

CFLAGS	?= -O2 -g
CFLAGS	+= -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wpointer-arith \
	   -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter \
	   -fstack-protector-strong -D_FORTIFY_SOURCE=2 $(SANFLAGS) \
	   $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# --as-needed: a program records only the libraries it calls, so those that
# never reach the engine or fetch a URL load neither libcurl nor libssl
# (lib/app/app_net.c). Outbound HTTP is libcurl's (lib/base/xfer.c).
LDFLAGS	+= $(SANFLAGS) -pthread -Wl,--as-needed
LDLIBS	+= $(shell pkg-config --libs $(PKGS) 2>/dev/null) -pthread -lm

# lib/ is one library in area folders (docs/architecture.md): each folder
# includes only the public headers of the folders below it.
LIB_AREAS = base store http engine oauth sandbox links runs tools ops mcp app ctl preview
LIB_SRC	 = $(foreach a,$(LIB_AREAS),$(wildcard lib/$(a)/*.c))
LIB_OBJ	 = $(LIB_SRC:lib/%.c=$(BUILD)/lib/%.o) $(BUILD)/lib/schema.o \
	   $(BUILD)/lib/supervisor_frames.o $(BUILD)/lib/supervisor_bin.o
PROG_SRC = $(wildcard cgi-bin/*.c)
PROGS	 = $(PROG_SRC:cgi-bin/%.c=$(BUILD)/bin/%)
UNIT_SRC = $(wildcard tests/unit/test_*.c)
UNITS	 = $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
SQL	 = $(sort $(wildcard sql/[0-9]*.sql))
INCLUDES = -Ilib -Icontainers

# The manual page of the settings, written from lib/base/config.c's table
# (docs/settings-man.c): docs/sandboxctl.8 is written by hand.
MAN5	 = $(BUILD)/man/code-sandbox-settings.5

all: $(PROGS) $(MAN5)

$(BUILD)/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -MMD -MP $(INCLUDES) -c -o $@ $<

# The schema files in sql/, compiled in as C strings (lib/store/schema.h).
$(BUILD)/lib/schema.c: $(SQL) Makefile
	@mkdir -p $(@D)
	@{ echo '#include "store/schema.h"'; \
	   echo 'const struct schema_step schema_steps[] = {'; \
	   for f in $(SQL); do \
	     n=$$(basename $$f | sed 's/^0*\([0-9][0-9]*\)-.*/\1/'); \
	     echo "{ $$n, \"$$f\","; \
	     sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $$f; \
	     echo '},'; \
	   done; \
	   echo '{ 0, NULL, NULL } };'; } > $@

$(BUILD)/lib/schema.o: $(BUILD)/lib/schema.c lib/store/schema.h
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -c -o $@ $<

# The supervisor (containers/supervisor): a static program the server
# uploads into the container, compiled in as a byte array (lib/sandbox/sup.h)
# so no installed copy can drift from the server. Never sanitized: it runs
# in the container, alone.
SUP_SRC	 = containers/supervisor/supervisor.c containers/supervisor/run.c \
	   containers/supervisor/channel.c containers/supervisor/frames.c \
	   containers/supervisor/io.c containers/supervisor/connect.c \
	   containers/supervisor/mux.c \
	   containers/supervisor/term.c containers/supervisor/term_screen.c \
	   containers/supervisor/term_cmd.c \
	   lib/base/output.c
# Terminals' screens: Debian's libvterm, linked in statically.
SUP_LIBS = -l:libvterm.a
SUP_CFLAGS = -std=c11 -D_GNU_SOURCE -Os -Wall -Wextra -Werror -Wshadow \
	   -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter \
	   -Icontainers -Ilib

$(BUILD)/supervisor/supervisor: $(SUP_SRC) $(wildcard containers/supervisor/*.h) lib/base/output.h lib/base/clock.h
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@ (static)")
	$(Q)$(CC) $(SUP_CFLAGS) -static -s -o $@ $(SUP_SRC) $(SUP_LIBS)

$(BUILD)/lib/supervisor_bin.c: $(BUILD)/supervisor/supervisor
	@{ echo '#include <stddef.h>'; \
	   echo '#include "sandbox/sup.h"'; \
	   echo 'const unsigned char sup_binary[] = {'; \
	   od -An -v -tx1 $< | sed -e 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	   echo '};'; \
	   echo "const size_t sup_binary_len = sizeof(sup_binary);"; } > $@

$(BUILD)/lib/supervisor_bin.o: $(BUILD)/lib/supervisor_bin.c lib/sandbox/sup.h
	$(Q)$(CC) $(filter-out -fsanitize%,$(CFLAGS)) -Ilib -c -o $@ $<

$(BUILD)/lib/supervisor_frames.o: containers/supervisor/frames.c containers/supervisor/frames.h
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Icontainers -c -o $@ $<

$(BUILD)/libcodesandbox.a: $(LIB_OBJ)
	@rm -f $@
	@$(if $(Q),echo "  AR      $@")
	$(Q)ar rcs $@ $(LIB_OBJ)

$(BUILD)/cgi-bin/%.o: cgi-bin/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -MMD -MP $(INCLUDES) -c -o $@ $<

# sandboxctl knows where the installed settings file is (lib/ctl/ctl.c).
$(BUILD)/lib/ctl/ctl.o: CFLAGS += -DSYSCONF_ENV_FILE='"$(SYSCONFDIR)/code-sandbox/env"'

$(BUILD)/bin/%: $(BUILD)/cgi-bin/%.o $(BUILD)/libcodesandbox.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(BUILD)/libcodesandbox.a $(LDLIBS)

$(BUILD)/tests/%.o: tests/unit/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -MMD -MP $(INCLUDES) -c -o $@ $<

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(BUILD)/libcodesandbox.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(BUILD)/libcodesandbox.a $(LDLIBS)

# test_chan_owner includes lib/sandbox/chan.c and stubs the engine under it:
# its own definitions, first on the command line, stand.
$(BUILD)/tests/test_chan_owner: LDFLAGS += -Wl,--allow-multiple-definition
# test_term_cells includes the supervisor's containers/supervisor/term_screen.c
# and links libvterm, as the supervisor does.
$(BUILD)/tests/test_term_cells: LDLIBS += -l:libvterm.a

units: $(UNITS)

$(BUILD)/docs/settings-man: docs/settings-man.c lib/base/config.h $(BUILD)/libcodesandbox.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) $(LDFLAGS) -o $@ $< $(BUILD)/libcodesandbox.a $(LDLIBS)

$(MAN5): $(BUILD)/docs/settings-man
	@mkdir -p $(@D)
	@$(if $(Q),echo "  GEN     $@")
	$(Q)$(BUILD)/docs/settings-man > $@.tmp && mv $@.tmp $@

# libFuzzer targets: one per parser of bytes from outside, each calling the
# production parser (tests/fuzz/fuzz_NAME.c, seeds in tests/fuzz/corpus/NAME).
FUZZ_SRC = $(wildcard tests/fuzz/fuzz_*.c)
FUZZERS	 = $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_SECONDS ?= 60

$(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(BUILD)/libcodesandbox.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(CC) $(CFLAGS) -fsanitize=fuzzer $(INCLUDES) \
	    -o $@ $< $(BUILD)/libcodesandbox.a \
	    $(LDFLAGS) $(LDLIBS)

fuzzers: $(FUZZERS)

-include $(LIB_OBJ:.o=.d) $(PROGS:$(BUILD)/bin/%=$(BUILD)/cgi-bin/%.d) $(UNITS:=.d)

# Host set-up shared by run and test: Debian packages, a Docker engine,
# the sandbox image, a .env with a fresh key, and the egress policy's
# network and firewall rules (containers/netpolicy.sh). make run also puts
# /sandbox on a fixed-size file system when it can (containers/sandbox-disk.sh).
# Serving needs only the "serve" packages; the tests' tools (Chromium, Node
# and the e2e suite's modules, socat) come with make test.
deps:
	@tests/setup/packages.sh serve

test-deps:
	@tests/setup/packages.sh test

setup: host
	@containers/build-image.sh

# Everything but the sandbox image.
host: deps
	@containers/ensure-docker.sh
	@test -f .env || { umask 077; key=$$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n'); \
	  printf 'SANDBOX_API_KEY=%s\n' "$$key" > .env; chmod 600 .env; \
	  echo "created .env with a fresh SANDBOX_API_KEY (mode 600)"; }
	@containers/netpolicy.sh apply --env-file .env

# The settings are checked before the web server starts: a bad one stops
# here with its reason (not a server answering 503 to everything).
run: setup
	@$(MAKE) --no-print-directory all
	@SANDBOX_ENV_FILE=$(CURDIR)/.env $(BUILD)/bin/sandboxctl check || \
	  { echo "make run: fix the setting above (in .env or the environment)" >&2; exit 1; }
	@containers/sandbox-disk.sh create --env-file .env || \
	  echo "make run: /sandbox is bounded by the server's watchdog (SANDBOX_DISK_LIMIT)"
	@if grep -Eq '^[[:space:]]*SANDBOX_PROXY[[:space:]]*=[[:space:]]*(1|true|yes|on)[[:space:]]*$$' .env; then \
	  CS_SANDBOXCTL=$(CURDIR)/$(BUILD)/bin/sandboxctl containers/proxy.sh start --env-file $(CURDIR)/.env; fi
	@tests/setup/serve.sh lighttpd

# The core image builds while the C code builds and the checks, unit and
# fuzz tests run (its status and output in CORE_STATUS, which tests/run.sh
# waits for before the e2e tests). The tests start on the core image while
# the full one (with the toolset) builds in the background; tests/run.sh
# waits for it before the tests that need it (*.image.test.mjs), which run
# last.
CORE_STATUS = build/image-core.status
test: test-deps
	@$(MAKE) --no-print-directory host
	@mkdir -p build && rm -f $(CORE_STATUS) $(CORE_STATUS).log
	@{ containers/build-image.sh --background >$(CORE_STATUS).log 2>&1; \
	  echo $$? >$(CORE_STATUS); } &
	@$(MAKE) --no-print-directory -j$$(nproc) SAN=1 all units
	@$(MAKE) --no-print-directory -j$$(nproc) FUZZ=1 fuzzers
	@CS_CORE_STATUS=$(CORE_STATUS) tests/run.sh

fuzz: deps
	@$(MAKE) --no-print-directory FUZZ=1 fuzzers
	@tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# SOAK_MINUTES (default 10), SOAK_CLIENTS (default 200): tests/soak/run.sh.
soak: setup
	@$(MAKE) --no-print-directory all
	@tests/soak/run.sh

bench: setup
	@$(MAKE) --no-print-directory all
	@tests/bench/run.sh

# Endpoint programs go to lib/code-sandbox/cgi-bin (the web server runs
# them); sandboxctl, the operator's command, to sbin with its man page,
# and the settings' page to man5.
# lighttpd.conf, the Caddyfile, the nginx server block, the Apache files
# (apache/: .htaccess, the mod_fcgid snippet, the mod_proxy_fcgi vhost) and
# the units get the installed paths (@LIBDIR@ and friends); the units go to
# share/code-sandbox/systemd, and install-systemd copies them to UNITDIR.
ENDPOINTS = $(filter-out $(BUILD)/bin/sandboxctl,$(PROGS))
SUBST	= sed -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@SBINDIR@|$(SBINDIR)|g' \
	  -e 's|@DATADIR@|$(DATADIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
	  -e 's|@UNITDIR@|$(UNITDIR)|g' -e 's|@USER@|$(USER_NAME)|g'
SHARE	= $(DESTDIR)$(DATADIR)/code-sandbox
UNITS_SRC = $(wildcard containers/systemd/*.service containers/systemd/*.socket \
	  containers/systemd/*.timer)

install: all
	install -d $(DESTDIR)$(LIBDIR)/code-sandbox/cgi-bin $(DESTDIR)$(SBINDIR) \
	    $(DESTDIR)$(DATADIR)/man/man5 $(DESTDIR)$(DATADIR)/man/man8 \
	    $(SHARE)/sql $(SHARE)/containers \
	    $(SHARE)/caddy $(SHARE)/nginx $(SHARE)/systemd/caddy.service.d
	install -m 755 $(ENDPOINTS) $(DESTDIR)$(LIBDIR)/code-sandbox/cgi-bin/
	install -m 755 $(BUILD)/bin/sandboxctl $(DESTDIR)$(SBINDIR)/
	install -m 644 docs/sandboxctl.8 $(DESTDIR)$(DATADIR)/man/man8/
	install -m 644 $(MAN5) $(DESTDIR)$(DATADIR)/man/man5/
	install -m 644 $(SQL) $(SHARE)/sql/
	$(SUBST) lighttpd.conf > $(SHARE)/lighttpd.conf && chmod 644 $(SHARE)/lighttpd.conf
	$(SUBST) caddy/Caddyfile > $(SHARE)/caddy/Caddyfile && chmod 644 $(SHARE)/caddy/Caddyfile
	$(SUBST) nginx/code-sandbox.conf > $(SHARE)/nginx/code-sandbox.conf && \
	    chmod 644 $(SHARE)/nginx/code-sandbox.conf
	install -d $(SHARE)/apache
	install -m 644 apache/.htaccess $(SHARE)/apache/
	for f in fcgid.conf proxy-fcgi.conf; do \
	  $(SUBST) apache/$$f > $(SHARE)/apache/$$f && chmod 644 $(SHARE)/apache/$$f || exit 1; done
	install -m 644 containers/Dockerfile.* $(SHARE)/containers/
	install -m 755 containers/*.sh $(SHARE)/containers/
	for u in $(UNITS_SRC) containers/systemd/caddy.service.d/code-sandbox.conf; do \
	  $(SUBST) $$u > $(SHARE)/systemd/$${u#containers/systemd/} && \
	  chmod 644 $(SHARE)/systemd/$${u#containers/systemd/} || exit 1; done

# The units where systemd reads them; as root on the machine itself (no
# DESTDIR) also the user, the settings file and a reload. Nothing is
# enabled or started: see docs/operating.md, "Serving it".
install-systemd: install
	install -d $(DESTDIR)$(UNITDIR)/caddy.service.d
	install -m 644 $(SHARE)/systemd/code-sandbox-* $(DESTDIR)$(UNITDIR)/
	install -m 644 $(SHARE)/systemd/caddy.service.d/code-sandbox.conf \
	    $(DESTDIR)$(UNITDIR)/caddy.service.d/
	@if [ -z "$(DESTDIR)" ]; then \
	  SYSCONFDIR=$(SYSCONFDIR) USER_NAME=$(USER_NAME) containers/install-host.sh; fi

clean:
	rm -rf build

.PHONY: all units fuzzers fuzz soak deps test-deps host setup run test bench install install-systemd clean
.SECONDARY:
