# Paths and flags.  Edit here, not in the Makefile.
VERSION = 0.1.0

PREFIX = /usr/local
BINDIR = $(PREFIX)/bin
MANDIR = $(PREFIX)/share/man
SHAREDIR = $(PREFIX)/share/xg
# The bats files make check runs; e.g. make check TESTS=tests/xg-run.bats
TESTS = tests
BASHCOMPDIR = $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR = $(PREFIX)/share/zsh/site-functions
# fish reads vendor completions under its own prefix and the user's data
# directory, not under /usr/local: a system install goes where its
# pkg-config file says (Debian's /usr/share/fish/vendor_completions.d).
FISH_VENDOR_DIR := $(shell pkg-config --variable completionsdir fish 2>/dev/null)
FISHCOMPDIR = $(if $(filter /usr /usr/local,$(PREFIX)),$(or $(FISH_VENDOR_DIR),$(PREFIX)/share/fish/vendor_completions.d),$(PREFIX)/share/fish/vendor_completions.d)

CC = cc
CFLAGS = -O2 -g
CPPFLAGS = -D_GNU_SOURCE -DXG_VERSION='"$(VERSION)"' -Ilib
# The share folder reaches one object alone (lib/path.o), so an install
# with another PREFIX rebuilds that object and links the programs again.
SHAREDIR_CPPFLAGS = -DXG_SHAREDIR='"$(SHAREDIR)"'
# libgit2 and libcurl are loaded with dlopen when needed (lib/snapshot/git.h,
# lib/curl.h); a program (the tests' driver, bench/curl-floor) that calls
# them directly links them, and --as-needed leaves them out of the others.
# A snapshot's mbedtls_x509_crt_parse_file (snapshot/take.c) is exported
# for the libgit2 it loads to find.
LDFLAGS = -Wl,--as-needed -Wl,--export-dynamic-symbol=mbedtls_x509_crt_parse_file
LDLIBS = -lgit2 -lcurl -ljq -lonig -lpcre2-8 -lm

DEVELOPER_CFLAGS = -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes -Wmissing-prototypes
SANITIZE_FLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

# The Debian 12 packages needed to build and test; python3 also runs the
# installed xg-fake-provider (and so make demo).
DEPS = build-essential pkg-config libgit2-dev libcurl4-openssl-dev libjq-dev \
	libonig-dev libpcre2-dev bats bats-assert bats-support mandoc git valgrind \
	python3 ca-certificates bsdextrautils jq bash-completion zsh fish parallel \
	bubblewrap clang libclang-rt-14-dev
