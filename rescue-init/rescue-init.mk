# rescue-init/rescue-init.mk: the ISO's /sbin/init, its unit tests and its
# fuzz targets.  Included by the top Makefile (BUILD, TOP, Q, msg).
#
#   make rescue-init        static musl binary, size printed, < 40 KiB
#   make check-rescue-init  parser unit tests, plain and ASan+UBSan, plus
#                           size and reproducibility checks
#   make fuzz               libFuzzer, FUZZ_TIME seconds per parser

RI_SRC := $(TOP)/rescue-init
RI_OUT := $(BUILD)/rescue-init
RESCUE_INIT := $(RI_OUT)/rescue-init
RI_MAX_SIZE := 40960
FUZZ_TIME ?= 20

RI_SRCS := $(addprefix $(RI_SRC)/,init.c drivers.c net.c report.c probe.c util.c parse.c disksig.c)
RI_DEPS := $(RI_SRCS) $(wildcard $(RI_SRC)/*.h) $(RI_SRC)/rescue-init.mk

# musl's printf is not used (parse.c has a small formatter) and opendir
# is not either (it pulls in malloc): that is what keeps this small.
# common-page-size=64 stops ld padding the data segment to a page.
# Paths are mapped so that the checkout location leaves no trace.
RI_CC := musl-gcc
RI_CFLAGS := -std=c99 -Os -Wall -Wextra -Werror \
	-ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables \
	-fno-unwind-tables -fno-stack-protector -fno-ident \
	-ffile-prefix-map=$(TOP)/=
RI_LDFLAGS := -static -Wl,--gc-sections -Wl,-z,noseparate-code \
	-Wl,-z,norelro -Wl,-z,common-page-size=64 -Wl,--build-id=none
RI_STRIP := strip --strip-all -R .comment

# Host builds of the parsers: unit tests and fuzz targets.
RI_HOST_CC := gcc
RI_HOST_CFLAGS := -std=c99 -O1 -g -Wall -Wextra -Werror
RI_SAN_CFLAGS := $(RI_HOST_CFLAGS) -fsanitize=address,undefined \
	-fno-sanitize-recover=all -fno-omit-frame-pointer
RI_FUZZ_CC := clang
RI_FUZZ_CFLAGS := -std=c99 -O1 -g -Wall -Wextra -Werror \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
RI_FUZZERS := cmdline mountinfo console disksig

ri_build_cmd = $(RI_CC) $(RI_CFLAGS) $(RI_LDFLAGS) -o $(1).unstripped \
	$(RI_SRCS) && $(RI_STRIP) -o $(1) $(1).unstripped

# A command line is kept in a .cmd file that is rewritten only when it
# changes (write-if-changed, top Makefile), and whatever that command makes
# depends on the file.  New flags mean a rebuild; an unchanged make is a
# no-op.  The text sits in a target variable so that its commas
# (-Wl,--gc-sections) do not split the call's arguments.
define ri_cmd_file
$(RI_OUT)/.$(1).cmd: RI_CMD_TEXT := $(2)
$(RI_OUT)/.$(1).cmd: FORCE
	$$(call write-if-changed,$$@,$$(RI_CMD_TEXT))
endef

$(eval $(call ri_cmd_file,rescue-init,$(call ri_build_cmd,$(RESCUE_INIT))))
$(eval $(call ri_cmd_file,test-parse,$(RI_HOST_CC) $(RI_HOST_CFLAGS)))
$(eval $(call ri_cmd_file,test-parse-san,$(RI_HOST_CC) $(RI_SAN_CFLAGS)))
$(eval $(call ri_cmd_file,fuzz,$(RI_FUZZ_CC) $(RI_FUZZ_CFLAGS)))

$(RESCUE_INIT): $(RI_DEPS) $(RI_OUT)/.rescue-init.cmd | deps
	$(call msg,CC,$(@:$(BUILD)/%=%))
	$(Q)$(call ri_build_cmd,$@.tmp)
	$(Q)size=$$(stat -c %s '$@.tmp'); \
	if [ "$$size" -ge $(RI_MAX_SIZE) ]; then \
		echo "rescue-init: $$size bytes: over the $(RI_MAX_SIZE)-byte budget" >&2; \
		rm -f '$@.tmp'; exit 1; \
	fi
	$(Q)rm -f '$@.tmp.unstripped'; mv -f '$@.tmp' '$@'

.PHONY: rescue-init
rescue-init: $(RESCUE_INIT)
	@echo "rescue-init: $$(stat -c %s '$(RESCUE_INIT)') bytes"

# ---------------------------------------------------------------- tests

$(RI_OUT)/test-parse: $(RI_SRC)/test-parse.c $(RI_SRC)/parse.c $(RI_SRC)/disksig.c \
		$(RI_SRC)/parse.h $(RI_SRC)/disksig.h $(RI_SRC)/unit-test.h $(RI_OUT)/.test-parse.cmd | deps
	$(call msg,HOSTCC,$(@:$(BUILD)/%=%))
	$(Q)$(RI_HOST_CC) $(RI_HOST_CFLAGS) -o $@ $(filter %.c,$^)

$(RI_OUT)/test-parse-san: $(RI_SRC)/test-parse.c $(RI_SRC)/parse.c $(RI_SRC)/disksig.c \
		$(RI_SRC)/parse.h $(RI_SRC)/disksig.h $(RI_SRC)/unit-test.h $(RI_OUT)/.test-parse-san.cmd | deps
	$(call msg,HOSTCC,$(@:$(BUILD)/%=%))
	$(Q)$(RI_HOST_CC) $(RI_SAN_CFLAGS) -o $@ $(filter %.c,$^)

# Unit tests twice (plain, sanitized), then the binary's size budget and a
# second build compared byte for byte with the first.
.PHONY: check-rescue-init
check-rescue-init: $(RESCUE_INIT) $(RI_OUT)/test-parse $(RI_OUT)/test-parse-san
	$(Q)mkdir -p '$(BUILD)/test-logs' '$(RI_OUT)/repro'
	$(Q)'$(RI_SRC)/run-tests.sh' '$(BUILD)/test-logs/rescue-init.summary' \
		'$(RI_OUT)/test-parse' '$(RI_OUT)/test-parse-san' \
		'$(RESCUE_INIT)' $(RI_MAX_SIZE) \
		'$(call ri_build_cmd,$(RI_OUT)/repro/rescue-init)'

# ----------------------------------------------------------------- fuzz

$(RI_OUT)/fuzz-%: $(RI_SRC)/fuzz-parse.c $(RI_SRC)/parse.c $(RI_SRC)/disksig.c \
		$(RI_SRC)/parse.h $(RI_SRC)/disksig.h $(RI_OUT)/.fuzz.cmd | deps
	$(call msg,FUZZCC,$(@:$(BUILD)/%=%))
	$(Q)$(RI_FUZZ_CC) $(RI_FUZZ_CFLAGS) -DFUZZ_$* -o $@ $(filter %.c,$^)

# New inputs go to the first corpus directory (in the build tree); the
# seeds in rescue-init/corpus/ are only read.
.PHONY: fuzz
fuzz: $(RI_FUZZERS:%=$(RI_OUT)/fuzz-%)
	$(Q)set -e; for f in $(RI_FUZZERS); do \
		mkdir -p '$(RI_OUT)/corpus/'$$f '$(RI_OUT)/crashes'; \
		printf '  %-9s %s\n' FUZZ "$$f ($(FUZZ_TIME) s)"; \
		'$(RI_OUT)/fuzz-'$$f -max_total_time=$(FUZZ_TIME) -max_len=8192 \
			-print_final_stats=1 \
			-artifact_prefix='$(RI_OUT)/crashes/'$$f- \
			'$(RI_OUT)/corpus/'$$f '$(RI_SRC)/corpus/'$$f \
			> '$(RI_OUT)/fuzz-'$$f.log 2>&1 || \
			{ tail -40 '$(RI_OUT)/fuzz-'$$f.log; \
			  echo "fuzz: $$f FAILED, log $(RI_OUT)/fuzz-$$f.log" >&2; \
			  exit 1; }; \
		grep -E '^stat::number_of_executed_units' '$(RI_OUT)/fuzz-'$$f.log \
			| sed "s/^stat::number_of_executed_units: */  $$f: /; s/$$/ runs, no crash/"; \
	done

CHECK_SUITES += rescue-init
