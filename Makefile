# xg -- see README.md.  Paths and flags live in config.mk.
include config.mk

ifeq ($(DEVELOPER),1)
CFLAGS += $(DEVELOPER_CFLAGS)
endif
ifeq ($(SANITIZE),1)
CFLAGS += $(SANITIZE_FLAGS)
LDFLAGS += $(SANITIZE_FLAGS)
endif

LIB_SRC := $(sort $(wildcard lib/*.c lib/*/*.c))
LIB_OBJ := $(LIB_SRC:.c=.o)
CMD_SRC := $(sort $(wildcard cmd/*.c))
PROGS := $(patsubst cmd/%.c,bin/%,$(CMD_SRC))
# Programs that are scripts (cmd/NAME.py): copied to bin/NAME with the
# version put in; installed beside the others, never run under valgrind.
SCRIPT_SRC := $(sort $(wildcard cmd/*.py))
SCRIPTS := $(patsubst cmd/%.py,bin/%,$(SCRIPT_SRC))
# The one test driver: a sub-command a file of tests/helper/ (git's test-tool).
DRIVER_SRC := $(sort $(wildcard tests/helper/*.c))
DRIVER_OBJ := $(DRIVER_SRC:.c=.o)
DRIVER := tests/bin/xg-test
# bench/run.sh's floor: a program that links libcurl and nothing more.
FLOOR := bench/bin/curl-floor
MAN1 := $(wildcard man/*.1)
MAN5 := $(wildcard man/*.5)
MAN7 := $(wildcard man/*.7)
# What ships under $(SHAREDIR) to be run, not read: mode 755 whatever the tree's.
SHARE_PROGS := demo/run

all: $(PROGS) $(SCRIPTS)

# Objects are rebuilt whenever the flags change (SANITIZE=1 after a plain
# build, say), as git does with GIT-CFLAGS.
.build-flags: FORCE
	@f='$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS)'; \
	if [ "$$f" != "$$(cat $@ 2>/dev/null)" ]; then printf '%s\n' "$$f" > $@; fi

# The share folder is the one path built in; lib/path.o alone holds it.
.build-sharedir: FORCE
	@if [ '$(SHAREDIR)' != "$$(cat $@ 2>/dev/null)" ]; then printf '%s\n' '$(SHAREDIR)' > $@; fi

lib/path.o: CPPFLAGS += $(SHAREDIR_CPPFLAGS)
lib/path.o: .build-sharedir

# Each object is rebuilt exactly when a header it includes changes: the
# compiler writes the list beside it (-MMD), with a rule for each header so
# a header removed is no error (-MP), as git does.
%.o: %.c .build-flags
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

-include $(LIB_OBJ:.o=.d) $(CMD_SRC:.c=.d) $(DRIVER_SRC:.c=.d) bench/curl-floor.d

# Made afresh each time: two folders may each have a file of one name
# (choices/filter.c, prompt/filter.c), which ar would replace in place.
lib/libxg.a: $(LIB_OBJ)
	rm -f $@
	$(AR) rcs $@ $(LIB_OBJ)

bin/%: cmd/%.o lib/libxg.a
	@mkdir -p bin
	$(CC) $(LDFLAGS) -o $@ $< lib/libxg.a $(LDLIBS)

bin/%: cmd/%.py config.mk
	@mkdir -p bin
	sed 's/@VERSION@/$(VERSION)/' $< > $@.tmp && chmod 755 $@.tmp && mv $@.tmp $@

$(DRIVER): $(DRIVER_OBJ) lib/libxg.a
	@mkdir -p tests/bin
	$(CC) $(LDFLAGS) -o $@ $(DRIVER_OBJ) lib/libxg.a $(LDLIBS)

$(FLOOR): bench/curl-floor.o lib/libxg.a
	@mkdir -p bench/bin
	$(CC) $(LDFLAGS) -o $@ $< lib/libxg.a $(LDLIBS)

# VALGRIND=1 puts wrappers that run each program under valgrind first on
# PATH; the tests do not need to know.  /usr/bin comes before the rest of
# the caller's PATH so the tests run Debian's python3 and git (the ones
# make deps installs), not a version manager's shim: a pyenv shim costs
# about 0.3 s per python3, and the suite starts thousands of them.
check: all $(DRIVER) lint
	@rm -rf tests/vgbin
ifeq ($(VALGRIND),1)
	@mkdir -p tests/vgbin; for p in $(PROGS) $(DRIVER); do \
	  n=$${p##*/}; printf '#!/bin/sh\nexec valgrind -q --leak-check=full --error-exitcode=1 "%s" "$$@"\n' "$(CURDIR)/$$p" > tests/vgbin/$$n; \
	  chmod +x tests/vgbin/$$n; done
endif
	@rc=$$(mktemp); { PATH="$(CURDIR)/tests/vgbin:$(CURDIR)/bin:$(CURDIR)/tests/bin:/usr/bin:/bin:$$PATH" \
	  XG_SRCDIR="$(CURDIR)" XG_MAKEFLAGS="SANITIZE=$(SANITIZE) DEVELOPER=$(DEVELOPER)" \
	  bats --tap $(BATSFLAGS) $(TESTS); echo $$? >"$$rc"; } | sh tests/tap-summary "$$rc"; \
	  s=$$?; rm -f "$$rc"; exit $$s

lint-man:
	mandoc -Tlint -Wwarning $(MAN1) $(MAN5) $(MAN7)

# The rules of the house: file sizes, the include arrows, the banned list,
# the opening comments, and the layers inside each room, read from the
# objects (so it builds them).
lint: $(LIB_OBJ)
	@sh tests/lint

# libFuzzer targets (tests/fuzz/README): libxg built again with clang and
# the fuzzer's instrumentation, one program per reader, each run for
# FUZZ_SECONDS on its corpus (seeded from the fixtures by tests/fuzz/seed.sh).
FUZZ_CC = clang
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
FUZZ_LDFLAGS = -fsanitize=fuzzer,address,undefined
FUZZ_SECONDS = 60
FUZZ_TARGETS = rec sse-openai-responses sse-openai-chat sse-anthropic-messages plan config \
	choices conversation
FUZZ_LIB_OBJ := $(patsubst %.c,tests/fuzz/obj/%.o,$(LIB_SRC))
FUZZ_BINS := $(addprefix tests/fuzz/bin/,$(FUZZ_TARGETS))
FUZZ_CPPFLAGS = $(CPPFLAGS) $(SHAREDIR_CPPFLAGS) -Itests/fuzz -DFUZZ_SHARE='"$(CURDIR)/share/xg"'

tests/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -c -o $@ $<

tests/fuzz/obj/libxg.a: $(FUZZ_LIB_OBJ) tests/fuzz/obj/tests/fuzz/home.o
	rm -f $@
	$(AR) rcs $@ $^

tests/fuzz/bin/sse-%: tests/fuzz/sse.c tests/fuzz/fuzz.h tests/fuzz/obj/libxg.a
	@mkdir -p tests/fuzz/bin
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -DFUZZ_KIND='"$*"' $(FUZZ_LDFLAGS) -o $@ $< \
	  tests/fuzz/obj/libxg.a $(LDLIBS)

tests/fuzz/bin/%: tests/fuzz/%.c tests/fuzz/fuzz.h tests/fuzz/obj/libxg.a
	@mkdir -p tests/fuzz/bin
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) $(FUZZ_LDFLAGS) -o $@ $< tests/fuzz/obj/libxg.a \
	  $(LDLIBS)

fuzz-build: $(FUZZ_BINS)

# Each target in turn; a crash stops make, its input saved as
# tests/fuzz/work/TARGET/crash-*.  The last lines of each run are its figures.
fuzz: fuzz-build
	@sh tests/fuzz/seed.sh
	@for t in $(FUZZ_TARGETS); do \
	  echo "== fuzz $$t, $(FUZZ_SECONDS) s"; \
	  ASAN_OPTIONS=fast_unwind_on_malloc=0 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/fuzz/lsan.supp \
	    tests/fuzz/bin/$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -close_fd_mask=2 \
	    -rss_limit_mb=1024 -artifact_prefix=tests/fuzz/work/$$t/ \
	    tests/fuzz/work/$$t/corpus tests/fuzz/work/$$t/seed 2>tests/fuzz/work/$$t.log || \
	    { tail -n 40 tests/fuzz/work/$$t.log; exit 1; }; \
	  grep -E '^stat::(number_of_executed_units|peak_rss_mb)|^#[0-9]+.*DONE' tests/fuzz/work/$$t.log; \
	done

# Runs killed with SIGKILL at random moments, then every conversation read,
# resumed and checked, every run.json parsed, no tool left; and concurrent
# writers of choices and a conversation (tests/torture/torture.py).  Not in
# CI; make check runs a small one (tests/torture.bats).
TORTURE_RUNS = 200
TORTURE_WORKERS = 4
torture: all $(DRIVER)
	PATH="$(CURDIR)/bin:$(CURDIR)/tests/bin:$$PATH" python3 tests/torture/torture.py \
	  --runs $(TORTURE_RUNS) --workers $(TORTURE_WORKERS) --writers 20

# A scripted agent session on the loopback model: no key, no network, a few
# seconds (share/xg/demo/README).
demo: all
	@PATH="$(CURDIR)/bin:$$PATH" sh share/xg/demo/run

bench: all
	@for b in bench/*.sh; do \
	  case $$b in bench/peers.sh|bench/lib.sh) continue ;; esac; \
	  echo "== $$b"; sh $$b || exit 1; \
	done

install: all
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
	  $(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(SHAREDIR)/prompts \
	  $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	install -m 755 $(PROGS) $(SCRIPTS) $(DESTDIR)$(BINDIR)/
	install -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(MAN5) $(DESTDIR)$(MANDIR)/man5/
	install -m 644 $(MAN7) $(DESTDIR)$(MANDIR)/man7/
	cd share/xg && find -L . -type d -exec install -d -m 755 '$(DESTDIR)$(SHAREDIR)/{}' ';' && \
	  find -L . -type f ! -name .keep -exec install -m 644 '{}' '$(DESTDIR)$(SHAREDIR)/{}' ';'
	for p in $(SHARE_PROGS); do install -m 755 share/xg/$$p $(DESTDIR)$(SHAREDIR)/$$p || exit 1; done
	install -m 644 completions/xg.bash $(DESTDIR)$(BASHCOMPDIR)/xg
	install -m 644 completions/_xg $(DESTDIR)$(ZSHCOMPDIR)/_xg
	install -m 644 completions/xg.fish $(DESTDIR)$(FISHCOMPDIR)/xg.fish
	# bash-completion and fish load a command's completion by its name.
	for p in $(PROGS); do n=$${p##*/}; [ "$$n" = xg ] && continue; \
	  ln -sf xg $(DESTDIR)$(BASHCOMPDIR)/$$n; ln -sf xg.fish $(DESTDIR)$(FISHCOMPDIR)/$$n.fish; done

uninstall:
	for p in $(PROGS) $(SCRIPTS); do rm -f $(DESTDIR)$(BINDIR)/$${p##*/}; done
	for m in $(MAN1); do rm -f $(DESTDIR)$(MANDIR)/man1/$${m##*/}; done
	for m in $(MAN5); do rm -f $(DESTDIR)$(MANDIR)/man5/$${m##*/}; done
	for m in $(MAN7); do rm -f $(DESTDIR)$(MANDIR)/man7/$${m##*/}; done
	rm -rf $(DESTDIR)$(SHAREDIR)
	rm -f $(DESTDIR)$(BASHCOMPDIR)/xg $(DESTDIR)$(ZSHCOMPDIR)/_xg $(DESTDIR)$(FISHCOMPDIR)/xg.fish
	for p in $(PROGS); do n=$${p##*/}; [ "$$n" = xg ] && continue; \
	  rm -f $(DESTDIR)$(BASHCOMPDIR)/$$n $(DESTDIR)$(FISHCOMPDIR)/$$n.fish; done

# Installs what the build and the tests need on Debian 12, without prompts.
deps:
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(DEPS) || \
	{ DEBIAN_FRONTEND=noninteractive apt-get update && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(DEPS); }

print-deps:
	@echo $(DEPS)

clean:
	rm -rf bin tests/bin tests/vgbin bench/bin lib/libxg.a .build-flags .build-sharedir
	rm -rf tests/fuzz/obj tests/fuzz/bin
	find lib cmd tests bench -name '*.[od]' -delete

FORCE:
.PHONY: fuzz fuzz-build torture all check demo lint lint-man bench install uninstall deps print-deps clean FORCE
.SECONDARY: $(LIB_OBJ) $(CMD_SRC:.c=.o) $(DRIVER_OBJ) bench/curl-floor.o
