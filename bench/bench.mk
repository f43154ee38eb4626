# make bench: this ISO (BIOS CD, BIOS USB, UEFI CD, UEFI USB, UEFI CD with
# Secure Boot on) against what a Debian user would otherwise reach for
# (Debian's stock kernel + its initramfs-tools initramfs, break=top), on the
# boot tests' QEMU (TCG) machine from tests/qemu.py: time to a shell prompt,
# least memory, sizes; the table goes to $(BENCH_DIR)/results.md, the plot
# to $(BENCH_DIR)/boot-time.png, console logs to $(BENCH_DIR)/logs.
# make bench-build: clean and no-op build times (a whole kernel build, with
# no build cache: RESCUE_CACHE=).
#
# The peer is downloaded (apt-get may refresh the host's package lists) and
# unpacked under $(BENCH_PEER) only, never installed on this machine; its
# stamp keeps a second `make bench` from preparing it again.

BENCH_DIR := $(BUILD)/bench
BENCH_PEER := $(BENCH_DIR)/peer
BENCH_RUNS ?= 5
# Every configuration is timed with the same -m; Debian's peer does not boot
# with 256 MiB (its initramfs unpacks to about 123 MiB), so 512.
BENCH_MEM ?= 512
# -m bisection bounds in MiB; BENCH_MEM_LO=0 skips the bisection.
# A quick run: make bench BENCH_RUNS=1 BENCH_MEM_LO=0
BENCH_MEM_LO ?= 16
BENCH_MEM_HI ?= 1024
# Whose least memory is bisected, and which configurations are timed
# (bench.py's keys; the default is all of them).
BENCH_MEM_CONFIGS ?= bios_cd,peer
BENCH_CONFIGS ?= bios_cd,bios_shell,bios_usb,uefi_cd,uefi_usb,uefi_sb,peer

$(BENCH_PEER)/stamp: $(TOP)/bench/peer.sh | deps
	$(call msg,PEER,Debian kernel + initramfs-tools initramfs in $(BENCH_PEER))
	$(Q)rm -f '$@'
	$(Q)'$(TOP)/bench/peer.sh' '$(BENCH_PEER)'

.PHONY: bench bench-peer bench-report bench-build
bench-peer: $(BENCH_PEER)/stamp

bench: $(ISO) $(BENCH_PEER)/stamp | deps
	$(call msg,BENCH,$(BENCH_RUNS) interleaved boots per configuration; -m bisection unless BENCH_MEM_LO=0)
	$(Q)'$(TOP)/bench/bench.py' run --out '$(BENCH_DIR)' --iso '$(ISO)' \
		--kernel '$(KERNEL_IMAGE)' --init '$(RESCUE_INIT)' --peer '$(BENCH_PEER)' \
		--runs $(BENCH_RUNS) --mem $(BENCH_MEM) \
		--mem-lo $(BENCH_MEM_LO) --mem-hi $(BENCH_MEM_HI) \
		--mem-configs $(BENCH_MEM_CONFIGS) --configs $(BENCH_CONFIGS)
	$(call msg,BENCH,$(BENCH_DIR)/results.md and boot-time.png)

# Rewrite results.md and the plot from results.json without booting anything.
bench-report:
	$(Q)'$(TOP)/bench/bench.py' report --out '$(BENCH_DIR)'

# A clean build in a scratch O= directory, then a no-op make there; the
# times join results.md. The clean build's ISO must be byte-identical to
# $(ISO): the same commit built later in another directory, kernel
# included. The scratch tree is removed afterwards.
BENCH_CLEAN := $(BENCH_DIR)/cleanbuild
bench-build: $(ISO) | deps
	$(call msg,BENCH,clean build: make O=$(BENCH_CLEAN) iso (long; log in $(BENCH_DIR)/cleanbuild.log))
	$(Q)rm -rf '$(BENCH_CLEAN)'; mkdir -p '$(BENCH_DIR)'
	+$(Q)t0=$$(date +%s.%N); \
	$(MAKE) --no-print-directory -C '$(TOP)' O='$(BENCH_CLEAN)' RESCUE_CACHE= iso \
		>'$(BENCH_DIR)/cleanbuild.log' 2>&1 || \
		{ echo "bench-build: the clean build failed; see $(BENCH_DIR)/cleanbuild.log" >&2; exit 1; }; \
	t1=$$(date +%s.%N); \
	$(MAKE) --no-print-directory -C '$(TOP)' O='$(BENCH_CLEAN)' iso >'$(BENCH_DIR)/noopbuild.log' 2>&1 || \
		{ echo "bench-build: the no-op make failed; see $(BENCH_DIR)/noopbuild.log" >&2; exit 1; }; \
	t2=$$(date +%s.%N); \
	'$(TOP)/bench/bench.py' build --out '$(BENCH_DIR)' \
		--clean "$$(echo "$$t1 - $$t0" | bc)" --noop "$$(echo "$$t2 - $$t1" | bc)" \
		--noop-output "$$(grep -v '^make.*Nothing to be done' '$(BENCH_DIR)/noopbuild.log' | head -5 | tr '\n' ';')" \
		--kernel-out '$(BENCH_CLEAN)/kernel' --jobs $(KERNEL_JOBS)
	$(Q)cmp '$(BENCH_CLEAN)/rescue.iso' '$(ISO)' || \
		{ echo "bench-build: not reproducible: $(BENCH_CLEAN)/rescue.iso differs from $(ISO) (kept for diffoscope)" >&2; exit 1; }
	$(call msg,BENCH,reproducible: the ISO of the clean build is byte-identical to $(ISO))
	$(Q)rm -rf '$(BENCH_CLEAN)'
