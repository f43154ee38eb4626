#!/usr/bin/python3
"""bench.py: the rescue ISO against what a Debian user would otherwise reach
for -- Debian's stock kernel with its initramfs-tools initramfs, booted with
break=top to the (initramfs) shell -- on one QEMU (TCG) setup.

  bench.py run    --out DIR --iso ISO --kernel BZIMAGE --init RESCUE_INIT --peer PEERDIR
  bench.py build  --out DIR --clean S --noop S   (record build times, re-report)
  bench.py report --out DIR                       (results.md + boot-time.png again)

Every boot runs on the boot tests' machine with their media, firmware,
menu, console driver and named bad patterns (tests/qemu.py), so the bench
boots exactly what the tests boot and a failed boot is reported by name,
not as a timeout. Times come from the host arrival time of console text,
kept by the console driver. Console logs go to DIR/logs/<run>.log,
measurements to DIR/results.json, the report to DIR/results.md and the plot
to DIR/boot-time.png.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import struct
import subprocess
import sys

# The machine, its media, firmware, bad patterns and console driver are the
# boot tests' (tests/qemu.py): the bench boots exactly what the tests boot.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from qemu import (BAD, BAD_LOW_MEMORY, BOOT_TIMEOUT, PROMPT, QEMU,  # noqa: E402
                  SH_FIRST_PROMPT, Ctx, Fail, Shell, bare_shell, boot_rescue,
                  menu, printk_time)
from secureboot import enroll_certificate  # noqa: E402  (the README's MokManager steps)

PROMPT_PEER = r"\(initramfs\) "
# Kernel messages that split the kernel's time.
RUN_INIT = r"Run (\S+) as init process"
ROOT_MOUNTED = r"VFS: Mounted root"


# --------------------------------------------------------------------------
# The configurations

class Config:
    """One way to boot: ours from a medium on a firmware (uefi as in
    Ctx.machine: False, True, or 'ms' for Secure Boot on), to a menu entry,
    or the peer (no entry: QEMU loads its kernel and initramfs)."""

    def __init__(self, key, title, label, medium, uefi=False, entry=None):
        self.key, self.title, self.label = key, title, label
        self.medium, self.uefi, self.entry = medium, uefi, entry


def peer_medium(c, a):
    return c.kernel_initrd(os.path.join(a.peer, "vmlinuz"), os.path.join(a.peer, "initrd.img"),
                           "console=ttyS0 break=top")


CONFIGS = [
    Config("bios_cd", "this ISO, BIOS CD, default entry (r)", "BIOS CD",
           lambda c, a: c.cdrom(), entry="rescue"),
    Config("bios_shell", "this ISO, BIOS CD, recovery shell (s, init=/bin/sh)",
           "BIOS CD init=/bin/sh", lambda c, a: c.cdrom(), entry="shell"),
    Config("bios_usb", "this ISO, BIOS USB stick (xHCI), default entry (r)", "BIOS USB",
           lambda c, a: c.usb_stick(), entry="rescue"),
    Config("uefi_cd", "this ISO, UEFI CD (OVMF), default entry (r)", "UEFI CD",
           lambda c, a: c.cdrom(), uefi=True, entry="rescue"),
    Config("uefi_usb", "this ISO, UEFI USB stick (OVMF, xHCI), default entry (r)", "UEFI USB",
           lambda c, a: c.usb_stick(), uefi=True, entry="rescue"),
    Config("uefi_sb", "this ISO, UEFI CD, Secure Boot on (OVMF with Microsoft's keys and "
           "the ISO's key enrolled), default entry (r)", "UEFI CD Secure Boot",
           lambda c, a: c.cdrom(), uefi="ms", entry="rescue"),
    Config("peer", "Debian kernel + initramfs, break=top (-kernel/-initrd)", "Debian initramfs",
           peer_medium),
]
BY_KEY = {c.key: c for c in CONFIGS}


def boot(cfg, a, mem, name, low_memory=False):
    """Boot cfg to its shell prompt the way the boot tests do, and check
    the shell answers. Return a dict of host times (s from QEMU start) and
    printk times; the console log is DIR/logs/<name>.log."""
    c = Ctx(name, a.iso, os.path.join(a.out, "logs"))
    r = {"config": cfg.key, "mem": mem, "ok": False, "log": c.log_path}
    vm = None
    efivars = None
    if cfg.uefi == "ms":        # a copy: every run boots the same store
        efivars = os.path.join(c.work, "enrolled-vars.fd")
        shutil.copyfile(a.enrolled_vars, efivars)
    try:
        vm = c.machine(cfg.medium(c, a), mem=mem, uefi=cfg.uefi, efivars=efivars)
        r["argv"] = vm.args
        if low_memory:
            vm.bad = BAD + BAD_LOW_MEMORY
        if cfg.entry:
            menu(vm, cfg.entry, uefi=cfg.uefi)
            r["menu"] = vm.arrival(vm.pos)      # menu() ends at the last entry
            r["key"] = vm.now()
        booted = vm.pos
        if cfg.entry == "shell":
            sh, prompt = bare_shell(vm), SH_FIRST_PROMPT
        elif cfg.entry:
            sh, prompt = boot_rescue(vm), PROMPT
        else:
            vm.wait(PROMPT_PEER, "the (initramfs) prompt", BOOT_TIMEOUT)
            sh, prompt = Shell(vm, PROMPT_PEER), PROMPT_PEER
        # The first prompt after the key, when it arrived (not the waits'
        # own time: the shell helpers go on typing after it).
        r["prompt"] = vm.arrival(re.compile(prompt).search(vm.buf, booted).end())
        # Not timed: Secure Boot was on, and the shell really answers.
        if cfg.uefi == "ms" and not re.search(r"Secure boot enabled", vm.buf):
            raise Fail("the kernel never said \"Secure boot enabled\"")
        answer = sh.out("echo bench-$((6*7))").strip()
        if answer != "bench-42":
            raise Fail("the shell answered %r to echo bench-$((6*7))" % answer)
        r["ok"] = True
    except Fail as e:
        r["error"] = str(e)
    finally:
        c.close()
    shutil.rmtree(c.work, ignore_errors=True)
    if vm is None:
        return r
    lines = vm.lines()
    kmsgs = [(t, printk_time(line), line) for t, line in lines
             if printk_time(line) is not None]
    # Host time of printk time 0: the smallest arrival - timestamp over
    # printk lines (lines printed live arrive at once; lines replayed when
    # the serial console registers arrive late and do not count).
    if kmsgs:
        r["kernel_start"] = min(t - ts for t, ts, _ in kmsgs)
    for key, pat in (("ts_root", ROOT_MOUNTED), ("ts_init", RUN_INIT)):
        found = [ts for _, ts, line in kmsgs if re.search(pat, line)]
        if found:
            r[key] = found[0]
    # UEFI: OVMF's own part ends when it starts the boot loader (shim).
    handoff = [t for t, line in lines if line.startswith("BdsDxe: starting")]
    if handoff:
        r["handoff"] = handoff[0]
    init_lines = [t for t, line in lines if line.startswith("rescue-init: ")]
    if init_lines:
        r["init_msg"] = init_lines[0]       # the init's first console line
    return r


def segments(r):
    """Where the time went in one run: (firmware+bootloader, kernel to root,
    kernel root to init, init to prompt), None where unknown."""
    if not r.get("ok") or "kernel_start" not in r or "ts_init" not in r:
        return None
    k0, ti = r["kernel_start"], r["ts_init"]
    troot = r.get("ts_root", ti)     # the peer mounts no root before its shell
    return {"firmware": k0, "kernel_root": troot, "kernel_init": ti - troot,
            "init_prompt": r["prompt"] - (k0 + ti)}


# --------------------------------------------------------------------------

def cmd_run(a):
    os.makedirs(os.path.join(a.out, "logs"), exist_ok=True)
    res = load(a.out)
    res.update({"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                "cores": os.cpu_count(), "cpu": cpu_model(),
                "qemu": subprocess.run([QEMU, "--version"], capture_output=True,
                                       text=True).stdout.splitlines()[0],
                "mem": a.mem, "runs_per_config": a.runs, "peer_version": read(a.peer, "version"),
                "peer_packages": read(a.peer, "packages"), "timing": [], "memory": {}})
    configs = [c for c in CONFIGS if c.key in a.configs.split(",")]
    if any(c.uefi == "ms" for c in configs):
        print("  %-9s Secure Boot: enrolling the ISO's key with MokManager (once)" % "BENCH",
              flush=True)
        try:
            a.enrolled_vars = enroll(a)
        except Fail as e:
            print("  %-9s Secure Boot: enrolling the ISO's key failed, no Secure Boot runs: %s"
                  % ("BENCH", e), flush=True)
            configs = [c for c in configs if c.uefi != "ms"]

    # Time to a prompt: interleaved, A B C D A B C D ...
    for n in range(1, a.runs + 1):
        for cfg in configs:
            r = boot(cfg, a, a.mem, "time-%s-%d" % (cfg.key, n))
            r["run"] = n
            res["timing"].append(r)
            print("  %-9s %-10s run %d: %s" % ("BOOT", cfg.key, n,
                  "%.2f s to the prompt" % r["prompt"] if r["ok"] else "FAILED: " + r["error"]),
                  flush=True)
            if not r["ok"]:
                print("  %-9s console log: %s" % ("", r["log"]), flush=True)

    # Least memory that boots to a shell, by bisection.
    if a.mem_lo:
        for key in a.mem_configs.split(","):
            res["memory"][key] = least_memory(BY_KEY[key], a)
    res["sizes"] = sizes(a)
    save(a.out, res)
    report(a.out)


def enroll(a):
    """OVMF's Secure Boot variable store (Microsoft's keys) with the ISO's
    certificate enrolled through MokManager, as the README tells a person
    to do once; every Secure Boot run starts from a copy of it."""
    c = Ctx("sb-enroll", a.iso, os.path.join(a.out, "logs"))
    try:
        efivars = c.efivars("ms")
        enroll_certificate(c, efivars)
        enrolled = os.path.join(a.out, "enrolled-vars.fd")
        shutil.copyfile(efivars, enrolled)
    finally:
        c.close()
    shutil.rmtree(c.work, ignore_errors=True)
    return enrolled


def least_memory(cfg, a):
    tried = {}

    def ok(m):
        r = boot(cfg, a, m, "mem-%s-%d" % (cfg.key, m), low_memory=True)
        tried[m] = r["ok"] or r["error"]
        print("  %-9s %-10s -m %4d: %s" % ("MEM", cfg.key, m, "boots to a shell" if r["ok"]
                                          else "fails: " + r["error"]), flush=True)
        return r["ok"]

    lo, hi = a.mem_lo, a.mem_hi
    out = {"lo": lo, "hi": hi, "tried": tried}
    if not ok(hi):
        out["least"] = None         # not even the upper bound
        return out
    if ok(lo):
        out["least"] = lo           # at most the lower bound
        return out
    while hi - lo > 1:              # lo fails, hi boots
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    out["least"] = hi
    out["fails_at"] = lo
    return out


def sizes(a):
    s = {}
    for key, path in (("iso", a.iso), ("kernel", a.kernel), ("init", a.init),
                      ("peer_kernel", os.path.join(a.peer, "vmlinuz")),
                      ("peer_initrd", os.path.join(a.peer, "initrd.img"))):
        if path and os.path.exists(path):
            s[key] = os.path.getsize(path)
    # Where the decompressed kernel ends: the boot protocol header's
    # pref_address (the kernel is decompressed there, at CONFIG_PHYSICAL_START
    # at least) + init_size. Below that no memory size can work.
    if a.kernel and os.path.exists(a.kernel):
        with open(a.kernel, "rb") as f:
            hdr = f.read(0x270)
        if len(hdr) == 0x270 and hdr[0x202:0x206] == b"HdrS":
            s["kernel_pref_address"] = struct.unpack_from("<Q", hdr, 0x258)[0]
            s["kernel_init_size"] = struct.unpack_from("<I", hdr, 0x260)[0]
    u = read(a.peer, "initrd-unpacked-bytes")
    if u:
        s["peer_initrd_unpacked"] = int(u)
    return s


def build_time_by_dir(kernel_out, jobs, depth=2):
    """Where a clean kernel build's time went, from its objects' mtimes:
    each object is charged the gap since the object finished before it,
    times the jobs that ran side by side; summed per directory (`depth`
    path parts). An estimate of CPU seconds, not a measurement of each
    compile. Returns [(seconds, directory, objects)], largest first."""
    done = []
    for root, _, files in os.walk(kernel_out):
        for f in files:
            if f.endswith(".o"):
                path = os.path.join(root, f)
                done.append((os.stat(path).st_mtime, os.path.relpath(path, kernel_out)))
    done.sort()
    by_dir = {}
    for (t0, _), (t1, rel) in zip(done, done[1:]):
        d = "/".join(os.path.dirname(rel).split("/")[:depth]) or "."
        secs, n = by_dir.get(d, (0.0, 0))
        by_dir[d] = (secs + (t1 - t0) * jobs, n + 1)
    return sorted(((s, d, n) for d, (s, n) in by_dir.items()), reverse=True)


def cmd_build(a):
    res = load(a.out)
    res["build"] = {"clean": a.clean, "noop": a.noop, "noop_output": a.noop_output,
                    "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds")}
    if a.kernel_out:
        res["build"]["jobs"] = a.jobs
        res["build"]["by_dir"] = build_time_by_dir(a.kernel_out, a.jobs)
    save(a.out, res)
    report(a.out)


def cmd_report(a):
    report(a.out)


# --------------------------------------------------------------------------
# The report

def med(xs):
    return statistics.median(xs) if xs else None


def fmt(x, unit=" s", nd=2):
    return "n/a" if x is None else ("%.*f%s" % (nd, x, unit))


def mib(b):
    return "n/a" if b is None else "%.2f MiB" % (b / 1048576)


def report(out):
    res = load(out)
    L = []
    w = L.append
    w("# Benchmark: rescue ISO vs Debian's initramfs shell\n")
    if "timing" in res:
        w("Measured %s on %d cores (%s), %s, `-m %d`; %d runs per configuration, "
          "interleaved (A B C D A B C D ...), medians reported." % (
              res["date"], res["cores"], res["cpu"], res["qemu"], res["mem"],
              res["runs_per_config"]))
        w("")
        w("Every configuration boots on the boot tests' machine (tests/qemu.py) with "
          "its medium and firmware, e.g. the first run:\n")
        w("    " + shlex.join(res["timing"][0].get("argv", [])) + "\n")
        pp = res.get("peer_packages", "").strip().replace("\n", ", ")
        w("Peer: Debian's stock kernel `%s` with the initramfs that initramfs-tools "
          "generates for it (defaults: MODULES=most, COMPRESS=zstd; packages: %s), "
          "booted with `console=ttyS0 break=top` to its `(initramfs)` emergency shell." % (
              res.get("peer_version", "?").strip(), pp))
        w("")
        w("## Time to a shell prompt\n")
        w("From QEMU start to the prompt on the serial console (host clock). "
          "Lower is better.\n")
        w("| configuration | median | min | max | ok runs | peer / this |")
        w("|---|---:|---:|---:|---:|---:|")
        tmed = {}
        for cfg in CONFIGS:
            rs = [r for r in res["timing"] if r["config"] == cfg.key]
            if not rs:
                continue
            ts = [r["prompt"] for r in rs if r["ok"]]
            tmed[cfg.key] = med(ts)
        for cfg in CONFIGS:
            rs = [r for r in res["timing"] if r["config"] == cfg.key]
            if not rs:
                continue
            ts = [r["prompt"] for r in rs if r["ok"]]
            ratio = "n/a"
            if cfg.entry and tmed.get(cfg.key) and tmed.get("peer"):
                ratio = "%.2f" % (tmed["peer"] / tmed[cfg.key])
            elif not cfg.entry:
                ratio = "1"
            w("| %s | %s | %s | %s | %d/%d | %s |" % (
                cfg.title, fmt(tmed[cfg.key]), fmt(min(ts) if ts else None),
                fmt(max(ts) if ts else None), len(ts), len(rs), ratio))
        w("")
        w("- Ours: the boot menu's 3 s timeout is *not* counted: the hotkey (`r`, or `s`) "
          "is pressed as soon as the menu's last entry is drawn on the serial console; "
          "the time includes firmware, bootloader, menu drawing and loading the kernel "
          "from the medium.")
        w("- The peer is booted the way that favours it: QEMU's `-kernel`/`-initrd` "
          "(no bootloader, no menu, no disk reads; `break=top` stops before udev and "
          "module loading). A real Debian install adds GRUB and a disk read of ~%s." % mib(
              sum(res.get("sizes", {}).get(k, 0) for k in ("peer_kernel", "peer_initrd"))))
        if res["mem"] != 256:
            w("- All configurations run with `-m %d`: the peer cannot boot with 256 MiB "
              "(its initramfs unpacks to %s; see the memory table)." % (
                  res["mem"], mib(res.get("sizes", {}).get("peer_initrd_unpacked"))))
        fails = [r for r in res["timing"] if not r["ok"]]
        for r in fails:
            w("- FAILED: %s run %d: %s (log `%s`)" % (r["config"], r["run"], r["error"], r["log"]))
        w("")

        w("## Where the time goes (medians)\n")
        w("Firmware+bootloader: QEMU start to printk time 0 (host arrival time of "
          "printk lines minus their timestamps; includes the kernel's decompression); "
          "under UEFI, OVMF's own part ends at its `BdsDxe: starting` line, when it "
          "starts shim. "
          "Kernel: printk timestamps of `VFS: Mounted root` and `Run ... as init process`. "
          "Init: from starting init to the prompt's arrival.\n")
        w("| configuration | firmware+bootloader | kernel until root mounted | "
          "kernel, root to init | init until prompt | sum |")
        w("|---|---:|---:|---:|---:|---:|")
        segmed = {}
        for cfg in CONFIGS:
            segs = [s for s in (segments(r) for r in res["timing"] if r["config"] == cfg.key) if s]
            if not segs:
                continue
            m = {k: med([s[k] for s in segs]) for k in segs[0]}
            segmed[cfg.key] = m
            rs = [r for r in res["timing"] if r["config"] == cfg.key and r.get("ok")]
            marks = [("OVMF done at", [r["handoff"] for r in rs if r.get("handoff")]),
                     ("menu at", [r["menu"] for r in rs if r.get("menu")])]
            fw = fmt(m["firmware"])
            notes = ["%s %s" % (what, fmt(med(ts))) for what, ts in marks if ts]
            if notes:
                fw += " (%s)" % ", ".join(notes)
            kr = fmt(m["kernel_root"])
            ki = fmt(m["kernel_init"])
            if not cfg.entry:
                kr += " (until /init, incl. initramfs unpacking)"
                ki = "-"
            ip = fmt(m["init_prompt"])
            k0i = [r["init_msg"] - r["kernel_start"] - r["ts_init"] for r in res["timing"]
                   if r["config"] == cfg.key and r.get("ok") and "init_msg" in r
                   and "kernel_start" in r and "ts_init" in r]
            if k0i:
                ip += " (first init line after %s)" % fmt(med(k0i))
            w("| %s | %s | %s | %s | %s | %s |" % (cfg.key, fw, kr, ki, ip,
                                                  fmt(sum(m.values()))))
        w("")
        write_plot(out, segmed)

    mem = res.get("memory", {})
    if mem:
        w("## Least memory that boots to a shell\n")
        w("Bisection of `-m` (MiB); a try passes when the prompt comes and the shell "
          "answers `echo`.\n")
        w("| configuration | least -m | fails at | tries |")
        w("|---|---:|---:|---|")
        for key, m in mem.items():
            least = m.get("least")
            least_s = ("> %d" % m["hi"]) if least is None else (
                ("<= %d" % least) if least == m["lo"] and "fails_at" not in m else str(least))
            tries = ", ".join("%s:%s" % (k, "ok" if v is True else "fail")
                              for k, v in sorted(m["tried"].items(), key=lambda kv: int(kv[0])))
            w("| %s | %s MiB | %s | %s |" % (key, least_s, m.get("fails_at", "-"), tries))
        for key, m in mem.items():
            f = m["tried"].get(str(m.get("fails_at"))) or m["tried"].get(m.get("fails_at"))
            if isinstance(f, str):
                w("\n- %s at -m %s: %s" % (key, m["fails_at"], f))
        sz = res.get("sizes", {})
        if "kernel_init_size" in sz:
            end = sz["kernel_pref_address"] + sz["kernel_init_size"]
            w("\n- Our bzImage is decompressed at its pref_address %s (CONFIG_PHYSICAL_START, "
              "the lowest address a relocatable x86-64 kernel takes) and needs init_size %s "
              "from there: nothing below ~%s can start it (the guest resets before the "
              "kernel's first console line)." % (mib(sz["kernel_pref_address"]),
                                                  mib(sz["kernel_init_size"]), mib(end)))
        w("")

    s = res.get("sizes", {})
    if s:
        w("## Size\n")
        w("| what | ours | peer |")
        w("|---|---:|---:|")
        peer_total = (s.get("peer_kernel", 0) + s.get("peer_initrd", 0)) or None
        w("| bootable image (ISO / kernel + initramfs) | %s | %s |" % (mib(s.get("iso")),
                                                                       mib(peer_total)))
        w("| kernel image | %s | %s |" % (mib(s.get("kernel")), mib(s.get("peer_kernel"))))
        w("| init / initramfs (compressed) | %s (%d bytes, static PID 1) | %s |" % (
            mib(s.get("init")), s.get("init", 0), mib(s.get("peer_initrd"))))
        if s.get("peer_initrd_unpacked"):
            w("| initramfs unpacked in RAM | none (the ISO is the root) | %s |" % mib(
                s["peer_initrd_unpacked"]))
        w("")

    b = res.get("build")
    w("## Build\n")
    if b:
        w("Measured %s (`make bench-build`): clean build `make O=<scratch> iso` %s, "
          "no-op make %s%s.\n" % (b["date"], fmt(b["clean"], " s", 0), fmt(b["noop"]),
                                   "" if not b.get("noop_output") else
                                   " (the no-op printed: `%s`)" % b["noop_output"][:200]))
    else:
        w("Not measured: run `make bench-build` (a clean kernel build; long).\n")
    if b and b.get("by_dir"):
        total = sum(secs for secs, _, _ in b["by_dir"])
        w("The kernel's slowest directories, estimated from the clean build's object "
          "mtimes (each object charged the gap since the one finished before it, times "
          "%d jobs):\n" % b["jobs"])
        w("| directory | CPU s (est.) | share | objects |")
        w("|---|---:|---:|---:|")
        for secs, d, n in b["by_dir"][:15]:
            w("| `%s` | %.0f | %.0f %% | %d |" % (d, secs, 100 * secs / total, n))
        w("")

    if "timing" in res:
        w("## Goals (reported, not asserted)\n")
        tb = tmed.get("bios_cd")
        tp = tmed.get("peer")
        if tb and tp:
            w("- BIOS boot to a prompt at most 1/5 of the peer's: ours %s, peer %s, "
              "ratio %.2f: **%s**." % (fmt(tb), fmt(tp), tp / tb, "met" if tb * 5 <= tp
                                       else "not met"))
            if tb * 5 > tp and "bios_cd" in segmed:
                m = segmed["bios_cd"]
                big = max(m, key=m.get)
                w("  The largest part of ours is %s (%s); 1/5 of the peer would be %s." % (
                    {"firmware": "firmware+bootloader", "kernel_root": "the kernel until "
                     "root is mounted", "kernel_init": "the kernel after root mount",
                     "init_prompt": "init until the prompt"}[big], fmt(m[big]), fmt(tp / 5)))
        else:
            w("- BIOS boot vs peer: n/a (a configuration never reached its prompt).")
        tu = tmed.get("bios_usb")
        if tb and tu:
            w("- BIOS USB stick within 10%% of BIOS CD: USB %s, CD %s: **%s**." % (
                fmt(tu), fmt(tb), "met" if tu <= tb * 1.1 else "not met"))
        if mem.get("bios_cd"):
            least = mem["bios_cd"].get("least")
            w("- Boots to a shell with 32 MiB: least -m %s: **%s**." % (
                least, "met" if least is not None and least <= 32 else "not met"))
        if s.get("iso"):
            w("- ISO at most 8 MiB: %s: **%s**." % (mib(s["iso"]), "met" if s["iso"] <= 8 << 20
                                                     else "not met"))
        w("")

    text = "\n".join(L) + "\n"
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(text)
    print(text)


def write_plot(out, segmed):
    """Stacked bars of the median time to a prompt, one bar per configuration."""
    if not segmed or not shutil.which("gnuplot"):
        return
    dat = os.path.join(out, "boot-time.dat")
    with open(dat, "w") as f:
        f.write("# config firmware kernel_root kernel_init init_prompt total\n")
        for cfg in CONFIGS:
            if cfg.key in segmed:
                m = segmed[cfg.key]
                f.write('"%s" %.3f %.3f %.3f %.3f %.3f\n' % (
                    cfg.label, m["firmware"], m["kernel_root"], m["kernel_init"],
                    m["init_prompt"], sum(m.values())))
    gp = """
set terminal pngcairo size 900,540 font ",10"
set output '%s'
set title "Time to a shell prompt, QEMU TCG (median)"
set ylabel "seconds from QEMU start"
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.6
set key outside bottom center horizontal maxrows 2
set grid ytics
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
plot '%s' using 2:xtic(1) title "firmware + bootloader", \\
     '' using 3 title "kernel until root mounted (peer: until /init)", \\
     '' using 4 title "kernel, root to init", \\
     '' using 5 title "init until the prompt", \\
     '' using 0:6:(sprintf("%%.2f s", $6)) with labels offset 0,0.8 notitle
""" % (os.path.join(out, "boot-time.png"), dat)
    subprocess.run(["gnuplot"], input=gp, text=True, check=False)


# --------------------------------------------------------------------------

def load(out):
    p = os.path.join(out, "results.json")
    if os.path.exists(p):
        with open(p) as f:
            return json.load(f)
    return {}


def save(out, res):
    p = os.path.join(out, "results.json")
    with open(p + ".tmp", "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
    os.replace(p + ".tmp", p)


def read(d, name):
    p = os.path.join(d, name)
    if os.path.exists(p):
        with open(p) as f:
            return f.read()
    return ""


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", required=True)
    r.add_argument("--iso", required=True)
    r.add_argument("--kernel")
    r.add_argument("--init")
    r.add_argument("--peer", required=True)
    r.add_argument("--runs", type=int, default=5)
    r.add_argument("--mem", type=int, default=512)
    r.add_argument("--mem-lo", type=int, default=16, help="0: no memory bisection")
    r.add_argument("--mem-hi", type=int, default=1024)
    r.add_argument("--mem-configs", default="bios_cd,peer",
                   help="comma-separated keys whose least memory is bisected")
    r.add_argument("--configs", default=",".join(c.key for c in CONFIGS),
                   help="comma-separated, of: %(default)s")
    b = sub.add_parser("build")
    b.add_argument("--out", required=True)
    b.add_argument("--clean", type=float, required=True)
    b.add_argument("--noop", type=float, required=True)
    b.add_argument("--noop-output", default="")
    b.add_argument("--kernel-out", help="the clean build's kernel O= directory")
    b.add_argument("--jobs", type=int, default=1, help="the kernel build's -j")
    p = sub.add_parser("report")
    p.add_argument("--out", required=True)
    a = ap.parse_args()
    for k in ("out", "iso", "peer", "kernel", "init"):
        if getattr(a, k, None):
            setattr(a, k, os.path.abspath(getattr(a, k)))
    os.makedirs(a.out, exist_ok=True)
    {"run": cmd_run, "build": cmd_build, "report": cmd_report}[a.cmd](a)


if __name__ == "__main__":
    main()
