# code-sandbox: a remote MCP server giving AI clients a persistent Linux
# sandbox, as FastCGI programs behind lighttpd or Caddy.
#
#   make            build the programs into build/bin
#   make run        install what is missing, start Docker, build the sandbox
#                   image, create .env, and serve through lighttpd
#   make test       the same set-up, then every test; last line "N passed, N failed"
#   make bench      benchmarks, printed as ratios against the raw Docker API
#   make install    PREFIX=/usr/local DESTDIR=
#
# SAN=1 builds with AddressSanitizer and UndefinedBehaviorSanitizer into
# build/san (the tests use that build).

PREFIX	?= /usr/local
# V=1 shows the commands.
ifneq ($(V),1)
Q	 = @
endif
DESTDIR	?=
CC	?= cc
PKGS	 = fcgi json-c libcurl libcrypto sqlite3

ifeq ($(SAN),1)
BUILD	?= build/san
SANFLAGS = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
else
BUILD	?= build
SANFLAGS =
endif

CFLAGS	?= -O2 -g
CFLAGS	+= -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wpointer-arith \
	   -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter \
	   -fstack-protector-strong -D_FORTIFY_SOURCE=2 $(SANFLAGS) \
	   $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDFLAGS	+= $(SANFLAGS) -pthread
LDLIBS	+= $(shell pkg-config --libs $(PKGS) 2>/dev/null) -pthread -lm

# lib/engine/: the Docker Engine API client, the archive reader and file
# access, the one door to the engine.
LIB_SRC	 = $(wildcard lib/*.c lib/engine/*.c)
LIB_OBJ	 = $(LIB_SRC:lib/%.c=$(BUILD)/lib/%.o) $(BUILD)/lib/schema.o \
	   $(BUILD)/lib/supervisor_frames.o $(BUILD)/lib/supervisor_bin.o
PROG_SRC = $(wildcard cgi-bin/*.c)
PROGS	 = $(PROG_SRC:cgi-bin/%.c=$(BUILD)/bin/%)
UNIT_SRC = $(wildcard tests/unit/test_*.c)
UNITS	 = $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
SQL	 = $(sort $(wildcard sql/[0-9]*.sql))

all: $(PROGS)

$(BUILD)/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -MMD -MP -Ilib -Ilib/engine -Icontainers/supervisor -c -o $@ $<

# The schema files in sql/, compiled in as C strings (lib/schema.h).
$(BUILD)/lib/schema.c: $(SQL) Makefile
	@mkdir -p $(@D)
	@{ echo '#include "schema.h"'; \
	   echo 'const struct schema_step schema_steps[] = {'; \
	   for f in $(SQL); do \
	     n=$$(basename $$f | sed 's/^0*\([0-9][0-9]*\)-.*/\1/'); \
	     echo "{ $$n, \"$$f\","; \
	     sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $$f; \
	     echo '},'; \
	   done; \
	   echo '{ 0, NULL, NULL } };'; } > $@

$(BUILD)/lib/schema.o: $(BUILD)/lib/schema.c lib/schema.h
	$(Q)$(CC) $(CFLAGS) -Ilib -Ilib/engine -Icontainers/supervisor -c -o $@ $<

# The supervisor (containers/supervisor): a static program the server
# uploads into the container, compiled in as a byte array (lib/sandbox_sup.h)
# so no installed copy can drift from the server. Never sanitized: it runs
# in the container, alone.
SUP_SRC	 = containers/supervisor/supervisor.c containers/supervisor/frames.c
SUP_CFLAGS = -std=c11 -D_GNU_SOURCE -Os -Wall -Wextra -Werror -Wshadow \
	   -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter \
	   -Icontainers/supervisor

$(BUILD)/supervisor/supervisor: $(SUP_SRC) containers/supervisor/frames.h
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@ (static)")
	$(Q)$(CC) $(SUP_CFLAGS) -static -s -o $@ $(SUP_SRC)

$(BUILD)/lib/supervisor_bin.c: $(BUILD)/supervisor/supervisor
	@{ echo '#include <stddef.h>'; \
	   echo '#include "sandbox_sup.h"'; \
	   echo 'const unsigned char sup_binary[] = {'; \
	   od -An -v -tx1 $< | sed -e 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	   echo '};'; \
	   echo "const size_t sup_binary_len = sizeof(sup_binary);"; } > $@

$(BUILD)/lib/supervisor_bin.o: $(BUILD)/lib/supervisor_bin.c lib/sandbox_sup.h
	$(Q)$(CC) $(filter-out -fsanitize%,$(CFLAGS)) -Ilib -c -o $@ $<

$(BUILD)/lib/supervisor_frames.o: containers/supervisor/frames.c containers/supervisor/frames.h
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Icontainers/supervisor -c -o $@ $<

$(BUILD)/libcodesandbox.a: $(LIB_OBJ)
	@rm -f $@
	@$(if $(Q),echo "  AR      $@")
	$(Q)ar rcs $@ $(LIB_OBJ)

$(BUILD)/cgi-bin/%.o: cgi-bin/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -MMD -MP -Ilib -Ilib/engine -Icontainers/supervisor -c -o $@ $<

$(BUILD)/bin/%: $(BUILD)/cgi-bin/%.o $(BUILD)/libcodesandbox.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(BUILD)/libcodesandbox.a $(LDLIBS)

$(BUILD)/tests/%.o: tests/unit/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -MMD -MP -Ilib -Ilib/engine -Icontainers/supervisor -c -o $@ $<

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(BUILD)/libcodesandbox.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(BUILD)/libcodesandbox.a $(LDLIBS)

units: $(UNITS)

-include $(LIB_OBJ:.o=.d) $(PROGS:$(BUILD)/bin/%=$(BUILD)/cgi-bin/%.d) $(UNITS:=.d)

# Host set-up shared by run and test: Debian packages, a Docker engine,
# the sandbox image and a .env with a fresh key.
deps:
	@tests/setup/packages.sh

setup: deps
	@containers/ensure-docker.sh
	@containers/build-image.sh
	@test -f .env || { umask 077; key=$$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n'); \
	  printf 'SANDBOX_API_KEY=%s\n' "$$key" > .env; chmod 600 .env; \
	  echo "created .env with a fresh SANDBOX_API_KEY (mode 600)"; }

run: setup
	@$(MAKE) --no-print-directory all
	@tests/setup/serve.sh lighttpd

test: deps
	@$(MAKE) --no-print-directory setup
	@$(MAKE) --no-print-directory SAN=1 all units
	@tests/run.sh

bench: setup
	@$(MAKE) --no-print-directory all
	@tests/bench/run.sh

# Endpoint programs go to lib/code-sandbox/cgi-bin (the web server runs
# them); sandboxctl, the operator's command, to sbin with its man page.
ENDPOINTS = $(filter-out $(BUILD)/bin/sandboxctl,$(PROGS))

install: all
	install -d $(DESTDIR)$(PREFIX)/lib/code-sandbox/cgi-bin $(DESTDIR)$(PREFIX)/sbin \
	    $(DESTDIR)$(PREFIX)/share/man/man8 $(DESTDIR)$(PREFIX)/share/code-sandbox/sql \
	    $(DESTDIR)$(PREFIX)/share/code-sandbox/containers/systemd
	install -m 755 $(ENDPOINTS) $(DESTDIR)$(PREFIX)/lib/code-sandbox/cgi-bin/
	install -m 755 $(BUILD)/bin/sandboxctl $(DESTDIR)$(PREFIX)/sbin/
	install -m 644 cgi-bin/sandboxctl.8 $(DESTDIR)$(PREFIX)/share/man/man8/
	install -m 644 $(SQL) $(DESTDIR)$(PREFIX)/share/code-sandbox/sql/
	install -m 644 lighttpd.conf $(DESTDIR)$(PREFIX)/share/code-sandbox/
	if [ -d caddy ] && [ -n "$$(ls caddy)" ]; then \
	  install -d $(DESTDIR)$(PREFIX)/share/code-sandbox/caddy && \
	  install -m 644 caddy/Caddyfile $(DESTDIR)$(PREFIX)/share/code-sandbox/caddy/; \
	  install -m 755 caddy/*.sh $(DESTDIR)$(PREFIX)/share/code-sandbox/caddy/; fi
	install -m 644 containers/Dockerfile.* $(DESTDIR)$(PREFIX)/share/code-sandbox/containers/
	install -m 755 containers/*.sh $(DESTDIR)$(PREFIX)/share/code-sandbox/containers/
	install -m 644 containers/systemd/* $(DESTDIR)$(PREFIX)/share/code-sandbox/containers/systemd/

clean:
	rm -rf build

.PHONY: all units deps setup run test bench install clean
.SECONDARY:
