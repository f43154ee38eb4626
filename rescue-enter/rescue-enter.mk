# rescue-enter/rescue-enter.mk: the ISO's rescue-enter command, its unit
# tests and fuzz targets.  Included by the top Makefile after
# rescue-init.mk, whose flags, .cmd-file helper and run-tests.sh it reuses
# (the same compiler settings, the same checks).
#
#   make rescue-enter        static musl binary, size printed
#   make rescue-boot         the command that boots an installed system
#                            with the rescue kernel (shares roots.c)
#   make check-rescue-enter  parser unit tests, plain and ASan+UBSan, size,
#                            static, reproducible
#   make fuzz                also runs this command's fuzz targets

RE_SRC := $(TOP)/rescue-enter
RE_OUT := $(BUILD)/rescue-enter
RESCUE_ENTER := $(RE_OUT)/rescue-enter
RE_MAX_SIZE := 131072

# The parsers (fstab, os-release, passwd, superblocks) are shared by the
# command, the host tests and the fuzzers; rescue-init's mountinfo parser
# is reused for "is it mounted already".
RE_PARSE_SRCS := $(RE_SRC)/etcparse.c $(RE_SRC)/probe.c $(RI_SRC)/disksig.c $(RI_SRC)/parse.c
RE_SRCS := $(RE_SRC)/enter.c $(RE_SRC)/roots.c $(RE_SRC)/readonly.c $(RE_PARSE_SRCS)
RE_HDRS := $(RE_SRC)/etcparse.h $(RE_SRC)/probe.h $(RE_SRC)/readonly.h $(RE_SRC)/roots.h $(RI_SRC)/parse.h \
	$(RI_SRC)/disksig.h
RE_DEPS := $(RE_SRCS) $(RE_HDRS) $(RE_SRC)/rescue-enter.mk
RE_FUZZERS := fstab osrelease probe
RESCUE_BOOT := $(RE_OUT)/rescue-boot
RB_SRCS := $(RE_SRC)/boot.c $(RE_SRC)/roots.c $(RE_SRC)/readonly.c $(RE_PARSE_SRCS)

# Unlike PID 1 this uses stdio and opendir; fixed-size fields are cut on
# purpose, hence no -Wformat-truncation.
RE_CFLAGS := $(RI_CFLAGS) -Wno-format-truncation
RE_HOST_CFLAGS := $(RI_HOST_CFLAGS) -Wno-format-truncation
RE_SAN_CFLAGS := $(RI_SAN_CFLAGS) -Wno-format-truncation

re_build_cmd = $(RI_CC) $(RE_CFLAGS) $(RI_LDFLAGS) -o $(1).unstripped \
	$(RE_SRCS) && $(RI_STRIP) -o $(1) $(1).unstripped

rb_build_cmd = $(RI_CC) $(RE_CFLAGS) $(RI_LDFLAGS) -o $(1).unstripped \
	$(RB_SRCS) && $(RI_STRIP) -o $(1) $(1).unstripped

$(eval $(call ri_cmd_file,rescue-enter,$(call re_build_cmd,$(RESCUE_ENTER))))
$(eval $(call ri_cmd_file,rescue-boot,$(call rb_build_cmd,$(RESCUE_BOOT))))
$(eval $(call ri_cmd_file,re-test-parse,$(RI_HOST_CC) $(RE_HOST_CFLAGS)))
$(eval $(call ri_cmd_file,re-test-parse-san,$(RI_HOST_CC) $(RE_SAN_CFLAGS)))

$(RESCUE_ENTER): $(RE_DEPS) $(RI_OUT)/.rescue-enter.cmd | deps
	$(call msg,CC,$(@:$(BUILD)/%=%))
	$(Q)mkdir -p '$(RE_OUT)'
	$(Q)$(call re_build_cmd,$@.tmp)
	$(Q)rm -f '$@.tmp.unstripped'; mv -f '$@.tmp' '$@'

.PHONY: rescue-enter
rescue-enter: $(RESCUE_ENTER)
	@echo "rescue-enter: $$(stat -c %s '$(RESCUE_ENTER)') bytes"

$(RESCUE_BOOT): $(RB_SRCS) $(RE_HDRS) $(RE_SRC)/rescue-enter.mk $(RI_OUT)/.rescue-boot.cmd | deps
	$(call msg,CC,$(@:$(BUILD)/%=%))
	$(Q)mkdir -p '$(RE_OUT)'
	$(Q)$(call rb_build_cmd,$@.tmp)
	$(Q)rm -f '$@.tmp.unstripped'; mv -f '$@.tmp' '$@'

.PHONY: rescue-boot
rescue-boot: $(RESCUE_BOOT)
	@echo "rescue-boot: $$(stat -c %s '$(RESCUE_BOOT)') bytes"

# ---------------------------------------------------------------- tests

RE_TEST_INPUTS := $(RE_SRC)/test-parse.c $(RE_PARSE_SRCS) \
	$(RE_SRC)/etcparse.h $(RE_SRC)/probe.h $(RI_SRC)/unit-test.h

$(RE_OUT)/test-parse: $(RE_TEST_INPUTS) $(RI_OUT)/.re-test-parse.cmd | deps
	$(call msg,HOSTCC,$(@:$(BUILD)/%=%))
	$(Q)mkdir -p '$(RE_OUT)'
	$(Q)$(RI_HOST_CC) $(RE_HOST_CFLAGS) -o $@ $(filter %.c,$^)

$(RE_OUT)/test-parse-san: $(RE_TEST_INPUTS) $(RI_OUT)/.re-test-parse-san.cmd | deps
	$(call msg,HOSTCC,$(@:$(BUILD)/%=%))
	$(Q)mkdir -p '$(RE_OUT)'
	$(Q)$(RI_HOST_CC) $(RE_SAN_CFLAGS) -o $@ $(filter %.c,$^)

.PHONY: check-rescue-enter
check-rescue-enter: $(RESCUE_ENTER) $(RE_OUT)/test-parse $(RE_OUT)/test-parse-san
	$(Q)mkdir -p '$(BUILD)/test-logs' '$(RE_OUT)/repro'
	$(Q)'$(RI_SRC)/run-tests.sh' '$(BUILD)/test-logs/rescue-enter.summary' \
		'$(RE_OUT)/test-parse' '$(RE_OUT)/test-parse-san' \
		'$(RESCUE_ENTER)' $(RE_MAX_SIZE) \
		'$(call re_build_cmd,$(RE_OUT)/repro/rescue-enter)'

CHECK_SUITES += rescue-enter

# ----------------------------------------------------------------- fuzz

$(RE_OUT)/fuzz-%: $(RE_SRC)/fuzz-parse.c $(RE_PARSE_SRCS) $(RE_SRC)/etcparse.h \
		$(RE_SRC)/probe.h $(RI_OUT)/.fuzz.cmd | deps
	$(call msg,FUZZCC,$(@:$(BUILD)/%=%))
	$(Q)mkdir -p '$(RE_OUT)'
	$(Q)$(RI_FUZZ_CC) $(RI_FUZZ_CFLAGS) -DFUZZ_$* -o $@ $(filter %.c,$^)

.PHONY: fuzz-rescue-enter
fuzz: fuzz-rescue-enter
fuzz-rescue-enter: $(RE_FUZZERS:%=$(RE_OUT)/fuzz-%)
	$(Q)set -e; for f in $(RE_FUZZERS); do \
		mkdir -p '$(RE_OUT)/corpus/'$$f '$(RE_OUT)/crashes'; \
		printf '  %-9s %s\n' FUZZ "$$f ($(FUZZ_TIME) s)"; \
		len=8192; [ $$f != probe ] || len=70000; \
		'$(RE_OUT)/fuzz-'$$f -max_total_time=$(FUZZ_TIME) -max_len=$$len \
			-print_final_stats=1 \
			-artifact_prefix='$(RE_OUT)/crashes/'$$f- \
			'$(RE_OUT)/corpus/'$$f '$(RE_SRC)/corpus/'$$f \
			> '$(RE_OUT)/fuzz-'$$f.log 2>&1 || \
			{ tail -40 '$(RE_OUT)/fuzz-'$$f.log; \
			  echo "fuzz: $$f FAILED, log $(RE_OUT)/fuzz-$$f.log" >&2; \
			  exit 1; }; \
		grep -E '^stat::number_of_executed_units' '$(RE_OUT)/fuzz-'$$f.log \
			| sed "s/^stat::number_of_executed_units: */  $$f: /; s/$$/ runs, no crash/"; \
	done
