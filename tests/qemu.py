#!/usr/bin/python3
"""The QEMU machine, its serial console and the test runner, used by every
test suite (boottest.py, and the suites beside it), the bench and the
screenshots: one definition of the machine, its firmware, its media and the
bad patterns.

A suite is a script that marks its tests with @test and ends with
sys.exit(qemu.main(__doc__)); see boottest.py.

Ideas from kunit_kernel.py, virtme-ng, U-Boot test/py console_base.py and
Buildroot's emulator.py; the code is our own.
"""


import argparse
import bisect
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time

import pexpect

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'scripts'))
from cache_entry import sha256  # noqa: E402,F401  (one definition, for the suites)

QEMU = 'qemu-system-x86_64'
OVMF_DIR = '/usr/share/OVMF'
# UEFI firmware: code and the variable store it starts from.  'plain' has
# Secure Boot off; the others have it on, with Microsoft's keys enrolled
# (a PC as sold) or Debian's snakeoil test key as the only db key
# (/usr/share/ovmf/PkKek-1-snakeoil.{key,pem}).
OVMF = {
    'plain': ('OVMF_CODE_4M.fd', 'OVMF_VARS_4M.fd'),
    'ms': ('OVMF_CODE_4M.secboot.fd', 'OVMF_VARS_4M.ms.fd'),
    'snakeoil': ('OVMF_CODE_4M.secboot.fd', 'OVMF_VARS_4M.snakeoil.fd'),
}
# The Secure Boot build keeps its variables in SMM-protected flash.
SECURE_BOOT_ARGS = ['-machine', 'q35,smm=on',
                    '-global', 'driver=cfi.pflash01,property=secure,value=on']

# The boot menu: image/menu.txt, which build-iso.sh makes the boot loaders'
# menus from.  MENU maps each entry's id to (hotkey, title); UEFI_ONLY are
# the ids isolinux does not show.
MENU_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                         '..', 'image', 'menu.txt')


def read_menu(path=MENU_FILE):
    menu, uefi_only = {}, set()
    with open(path, encoding='utf-8') as f:
        for line in f:
            fields = [x.strip() for x in line.split('|')]
            if not fields[0] or fields[0].startswith('#'):
                continue
            ident, key, kind, title = fields[:4]
            menu[ident] = (key, title)
            if kind == 'mokmanager':
                uefi_only.add(ident)
    return menu, uefi_only


MENU, UEFI_ONLY = read_menu()
MENU_DEFAULT = next(iter(MENU))         # the first entry
MENU_TITLE = MENU[MENU_DEFAULT][1]      # what tells us the menu is on screen
MENU_LAST = MENU[list(MENU)[-1]][1]     # drawn last: the menu is complete

PROMPT = r'rescue:[^\n#]*# '            # rescue-init's PS1 'rescue:\w# '
SH_PROMPT = 'SH_PROMPT# '               # what we set PS1 to in a bare /bin/sh
# busybox sh's own prompt: it ends a line, unless a kernel message lands
# right after it.
SH_FIRST_PROMPT = r'(?m)[#$] (?:$|(?=\[ *\d+\.\d+\]))'

# Named bad patterns: any of them fails the wait at once.
BAD = [
    ('kernel panic', r'Kernel panic'),
    ('init was killed', r'Attempted to kill init'),
    ('root not mountable', r'Unable to mount root'),
    ('smoke test failed', r'rescue-check: FAIL[^\n]*'),
    ('shell respawn loop', r'[^\n]*not respawning[^\n]*'),
    ('kernel oops', r'\bOops\b|\bBUG: [^\n]*|general protection fault'),
    # GRUB's errors: a refused or missing kernel ("bad shim signature").
    # The whole line, so that a wait for one error is not beaten by the
    # first half of it.
    ('GRUB error', r'(?m)^error: [^\n]*\n'),
]
# `Waiting for root device` is fine for a moment (USB sticks enumerate
# late); it is bad only when no root gets mounted within this many seconds.
ROOT_WAIT = ('Waiting for root device', r'Waiting for [^\n]*root device[^\n]*')
ROOT_WAIT_LIMIT = 20
# Not 'VFS: Mounted root': a candidate without rootmarker='s file is
# mounted, then refused, while the wait goes on.
ROOT_FOUND = r'Run [^\n]* as init|rescue-init:|Freeing unused'

# How a boot fails when the machine has too little memory: add these to a
# machine's bad patterns (vm.bad) to tell "too small" from a slow boot.
BAD_LOW_MEMORY = [
    ('out of memory', r'[Oo]ut of memory[^\n]*'),
    ('initramfs unpacking failed', r'Initramfs unpacking failed[^\n]*'),
    # isolinux that cannot place the kernel it loaded (then back to its menu).
    ('isolinux could not start the kernel', r'Booting kernel failed[^\n]*(?=\n)'),
]

TIMEOUT_FACTOR = float(os.environ.get('TIMEOUT_FACTOR') or 1)
BOOT_TIMEOUT = 90           # menu entry chosen -> shell prompt
MENU_TIMEOUT = 60           # QEMU start -> boot menu on the console
CMD_TIMEOUT = 30

# Terminal control sequences, removed from what we match on and log.
# Cursor positioning becomes a newline so that separate screen rows do not
# run together; every other sequence (colours, charset switches) goes.
_ESC_MOVE = re.compile(r'\x1b\[[0-9;?]*[Hf]')
_ESC_ANY = re.compile(r'\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)'
                      r'|[()*+][0-9A-Za-z]|[@-Z\\-_=>78])')
_ESC_PARTIAL = re.compile(r'\x1b(\[[0-?]*[ -/]*|\][^\x07\x1b]*|[()*+])?$')
_CTRL = re.compile(r'[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]')
# A kernel message on the console (CONFIG_PRINTK_TIME); group 1 is its time.
KMSG_LINE = re.compile(r'^\[ *(\d+\.\d+)\] [^\n]*\n?', re.M)
# rescue-init's reports of what happens on its own (modules loaded, a
# lease), which may land in a command's answer too.
INIT_EVENT_LINE = re.compile(r'^rescue-init: (drivers|net): [^\n]*\n?', re.M)


class Fail(Exception):
    """A test failure with a one-line reason."""


def clean(text):
    text = _ESC_MOVE.sub('\n', text)
    text = _ESC_ANY.sub('', text)
    text = re.sub(r'\r+\n', '\n', text).replace('\r', '\n')
    return _CTRL.sub('', text)


def timeout(seconds):
    return seconds * TIMEOUT_FACTOR


def printk_time(line):
    """The timestamp (s since the kernel started) a kernel message line
    starts with, or None for any other line."""
    m = KMSG_LINE.match(line)
    return float(m.group(1)) if m else None


class Machine:
    """One QEMU run whose serial console is a pexpect pty.

    Console output is cleaned of control sequences and kept in self.buf;
    self.pos is where the next wait starts searching, so every wait sees
    only what arrived after the previous match. The host time at which each
    part of self.buf arrived is kept too (arrival(), lines()), for the bench.
    Waits fail at once on a named bad pattern: self.bad unless the wait
    names its own.
    """

    def __init__(self, args, log):
        self.args = args
        self.log = log
        self.buf = ''
        self.pos = 0
        self.raw_hold = ''
        self.start = time.monotonic()
        self.arrived = []       # (len(self.buf) after a read, host s since start)
        self.bad = BAD
        self.root_wait_since = None
        self.child = None
        self.exitstatus = None
        self.received = 0       # raw characters read so far
        self.commands = 0       # commands run, numbers their end markers
        self.cmd_start = 0      # where the console stood when the last command was typed

    def now(self):
        """Seconds since QEMU started."""
        return time.monotonic() - self.start

    def note(self, text):
        """A harness line in the log, set apart from console output."""
        self.log.write('\n[boottest %6.1fs] %s\n' % (self.now(), text))
        self.log.flush()

    def boot(self):
        self.note('run: ' + shlex.join(self.args))
        self.start = time.monotonic()
        self.child = pexpect.spawn(self.args[0], self.args[1:], encoding='utf-8',
                                   codec_errors='replace', echo=False,
                                   dimensions=(50, 250))

    def _feed(self, data):
        self.received += len(data)
        data = self.raw_hold + data
        m = _ESC_PARTIAL.search(data)
        if m:       # a control sequence split across reads: finish it later
            self.raw_hold, data = data[m.start():], data[:m.start()]
        else:
            self.raw_hold = ''
        # Trailing \r may be the first half of \r\n (or \r\r\n: QEMU's
        # stdio keeps the host tty's ONLCR).
        body = data.rstrip('\r')
        if body != data:
            self.raw_hold, data = data[len(body):] + self.raw_hold, body
        text = clean(data)
        self.buf += text
        if text:
            self.arrived.append((len(self.buf), self.now()))
        # Screen redraws leave runs of empty lines: keep the log readable.
        self.log.write(re.sub(r'\n\s*\n(\s*\n)+', '\n\n', text))
        self.log.flush()

    def _read(self, wait):
        """Read what is there, waiting at most `wait` s. False on EOF."""
        if self.exitstatus is not None:
            return False
        try:
            self._feed(self.child.read_nonblocking(65536, max(wait, 0.01)))
        except pexpect.TIMEOUT:
            pass
        except pexpect.EOF:
            self._feed('')
            self.child.close()
            self.exitstatus = self.child.exitstatus
            if self.exitstatus is None:
                self.exitstatus = 128 + (self.child.signalstatus or 0)
            self.note('QEMU exited with status %d' % self.exitstatus)
            return False
        return True

    def arrival(self, offset):
        """Host time (s since QEMU started) at which self.buf[offset - 1]
        arrived: arrival(m.end()) is when match m was complete."""
        i = bisect.bisect_left(self.arrived, (offset,))
        return self.arrived[i][1] if i < len(self.arrived) else self.now()

    def lines(self):
        """(host time it arrived, text) for every whole console line so far."""
        return [(self.arrival(m.end()), m.group(1))
                for m in re.finditer(r'([^\n]*)\n', self.buf)]

    def wait(self, want, what, secs, bad=None, eof_ok=False):
        """Wait for regex `want` (or a list of them); return the match.

        Fails at once on a bad pattern (`bad`, by default self.bad), when
        QEMU exits, or on timeout.
        """
        bad = self.bad if bad is None else bad
        wants = want if isinstance(want, list) else [want]
        pats = [(None, re.compile(w)) for w in wants]
        pats += [(name, re.compile(p)) for name, p in bad]
        root_wait = re.compile(ROOT_WAIT[1])
        root_found = re.compile(ROOT_FOUND)
        secs = timeout(secs)
        deadline = time.monotonic() + secs
        self.note('wait up to %.0f s for %s' % (secs, what))
        while True:
            best = None
            for name, p in pats:
                m = p.search(self.buf, self.pos)
                if m and (best is None or m.start() < best[1].start()):
                    best = (name, m)
            # Root-wait bookkeeping over everything seen so far.
            if self.root_wait_since is None:
                if root_wait.search(self.buf, self.pos):
                    self.root_wait_since = time.monotonic()
            elif root_found.search(self.buf, self.pos):
                self.root_wait_since = None
            if best:
                name, m = best
                self.pos = m.end()
                if name is not None:   # report the whole line
                    a = self.buf.rfind('\n', 0, m.start()) + 1
                    b = self.buf.find('\n', m.end())
                    line = self.buf[a:b if b >= 0 else len(self.buf)].strip()
                    raise Fail('%s: "%s" while waiting for %s' % (name, line, what))
                self.root_wait_since = None
                return m
            now = time.monotonic()
            if (self.root_wait_since is not None and
                    now - self.root_wait_since > timeout(ROOT_WAIT_LIMIT)):
                raise Fail('"%s" lasted more than %.0f s while waiting for %s'
                           % (ROOT_WAIT[0], timeout(ROOT_WAIT_LIMIT), what))
            if now >= deadline:
                raise Fail('timed out after %.0f s waiting for %s' % (secs, what))
            if not self._read(min(deadline - now, 0.5)):
                if eof_ok:
                    return None
                raise Fail('QEMU exited (status %s) while waiting for %s'
                           % (self.exitstatus, what))

    def wait_quiet(self, quiet, secs):
        """Wait until the console has been silent for `quiet` seconds."""
        deadline = time.monotonic() + timeout(secs)
        while time.monotonic() < deadline:
            n = self.received
            if not self._read(quiet):
                raise Fail('QEMU exited (status %s)' % self.exitstatus)
            if self.received == n:
                return
        # Never silent (e.g. a countdown): go on anyway.

    def send(self, keys, label=None):
        self.note('type: ' + (label or repr(keys)))
        self.child.send(keys)

    def type_line(self, line):
        """Type one line as a person would, with Enter at the end."""
        self.send(line + '\r', label=line)

    def expect_exit(self, what, secs=60, bad=None):
        """QEMU must end by itself (poweroff, reboot with -no-reboot)."""
        self.wait(r'(?!x)x', what, secs, bad=bad, eof_ok=True)
        return self.exitstatus

    def stop(self):
        if self.child is not None and self.exitstatus is None:
            self.note('killing QEMU')
            try:
                self.child.close(force=True)
            except pexpect.ExceptionPexpect:
                # pexpect waits 0.1 s after SIGKILL; on a loaded host a
                # QEMU freeing its memory takes longer.  Reap it here
                # rather than abort the whole suite.
                self.note('QEMU still there after SIGKILL: waiting for it')
                reap(self.child.pid, 60)
            self.exitstatus = -1

    def monitor(self, *cmds, secs=10):
        """Commands at QEMU's human monitor (Ctx.machine(monitor=True)), in
        one connection; returns what it answered to the last."""
        deadline = time.monotonic() + timeout(secs) * max(1, len(cmds))
        answer = ''
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout(secs))
            s.connect(self.monitor_path)
            for cmd in (None,) + cmds:
                if cmd is not None:
                    self.note('monitor: ' + cmd)
                    s.sendall(cmd.encode() + b'\n')
                got = b''
                while not got.endswith(b'(qemu) '):
                    if time.monotonic() > deadline:
                        raise Fail('QEMU monitor: no prompt after %r' % cmd)
                    data = s.recv(4096)
                    if not data:
                        raise Fail('QEMU monitor closed after %r' % cmd)
                    got += data
                answer = clean(got.decode('utf-8', 'replace'))
        return answer

    def type_keys(self, text):
        """Type `text` on the PS/2 keyboard, i.e. on the screen's console
        (tty0), with the monitor's sendkey; US layout."""
        self.note('keyboard: %r' % text)
        keys = []
        for ch in text:
            if ch in _KEYS:
                keys.append(_KEYS[ch])
            elif ch.isupper():
                keys.append('shift-' + ch.lower())
            elif ch.isalnum():
                keys.append(ch)
            else:
                raise Fail('type_keys: no key for %r' % ch)
        self.monitor(*['sendkey ' + k for k in keys], secs=5)


def reap(pid, secs):
    """SIGKILL pid and wait up to secs for it to end; a Fail if it does
    not."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + secs
    while time.monotonic() < deadline:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if done:
            return
        time.sleep(0.2)
    raise Fail('QEMU (pid %d) did not end %d s after SIGKILL' % (pid, secs))


# Characters that are not their own QEMU key name (US layout).
_KEYS = {' ': 'spc', '\n': 'ret', '-': 'minus', '_': 'shift-minus', '=': 'equal',
         '/': 'slash', '.': 'dot', '>': 'shift-dot', '<': 'shift-comma', ',': 'comma',
         ';': 'semicolon', '&': 'shift-7', '$': 'shift-4', '|': 'shift-backslash',
         "'": 'apostrophe', '"': 'shift-apostrophe'}


class Shell:
    """A shell on the console, reached through `prompt`."""

    def __init__(self, vm, prompt):
        self.vm = vm
        self.prompt = prompt

    def run(self, cmd, secs=CMD_TIMEOUT, ok=True, bad=None, answers=()):
        """Type `cmd`, return (status, output). The status comes from an
        `echo` of $? that the command's own echo cannot match.
        answers: (prompt regex, text, label) for each question the command
        asks, in order: wait for the prompt, type the text and Enter; the
        log shows the label instead of the text (a passphrase)."""
        self.vm.commands += 1
        mark = '@@%d@@' % self.vm.commands
        self.vm.cmd_start = self.vm.pos
        self.vm.type_line('%s; echo %s$?@@' % (cmd, mark))
        for prompt, text, label in answers:
            self.vm.wait(prompt, 'the question "%s" of: %s' % (prompt, cmd), secs, bad=bad)
            self.vm.send(text + '\r', label=label)
        m = self.vm.wait(re.escape(mark) + r'(\d+)@@', 'the answer to: ' + cmd,
                         secs, bad=bad)
        before = self.vm.buf[:m.start()]
        # Output: from the line after our typed command (its echo, which
        # holds the marker followed by $?) up to the marker. Without that
        # echo there is no telling where the answer starts: never guess
        # from the whole log, where menu text could match.
        start = self.vm.buf.rfind(mark + '$?@@', self.vm.cmd_start, m.start())
        if start < 0:
            raise Fail('the console never echoed `%s`' % cmd)
        start = self.vm.buf.find('\n', start) + 1
        # Kernel messages and init's reports may land in the middle of
        # the answer: drop them.
        out = INIT_EVENT_LINE.sub('', KMSG_LINE.sub('', before[start:]))
        status = int(m.group(1))
        self.vm.wait(self.prompt, 'the prompt', secs, bad=bad)
        if ok and status != 0:
            raise Fail('`%s` exited with status %d: %s'
                       % (cmd, status, out.strip()[-300:]))
        return status, out

    def out(self, cmd, **kw):
        return self.run(cmd, **kw)[1]


# ---------------------------------------------------------------------------
# Machines and boot paths


class Ctx:
    """What a test gets: the ISO, a scratch dir, its log, its machine."""

    def __init__(self, name, iso, logdir):
        self.name = name
        self.iso = iso
        self.work = os.path.join(logdir, name + '.work')
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        self.log_path = os.path.join(logdir, name + '.log')
        self.log = open(self.log_path, 'w', encoding='utf-8', errors='replace')
        self.vms = []

    def efivars(self, firmware='plain'):
        """A fresh copy of `firmware`'s variable store in the work dir;
        pass it to machine(efivars=) to keep what one boot enrolled for
        the next."""
        path = os.path.join(self.work, 'vars-%s-%d.fd' % (firmware, len(self.vms)))
        shutil.copyfile(os.path.join(OVMF_DIR, OVMF[firmware][1]), path)
        return path

    def machine(self, disks=(), mem=256, uefi=False, extra=(), efivars=None,
                monitor=False):
        """QEMU with the serial console on our pty; `disks` are QEMU args.

        uefi: False for SeaBIOS; True (or 'plain') for OVMF; 'ms' or
        'snakeoil' for OVMF with Secure Boot on (see OVMF).  efivars: the
        variable store to boot with (default: a fresh copy).
        monitor: QEMU's monitor on a unix socket, for vm.monitor() and
        vm.type_keys() (the keyboard of the screen's console)."""
        args = [QEMU, '-accel', 'tcg', '-nodefaults', '-no-reboot',
                '-no-user-config', '-display', 'none', '-vga', 'std',
                '-m', str(mem), '-smp', '1',
                '-chardev', 'stdio,id=con,signal=off', '-serial', 'chardev:con']
        mon = os.path.join(self.work, 'monitor.sock')
        if monitor:
            args += ['-monitor', 'unix:%s,server=on,wait=off' % mon]
        if uefi:
            firmware = 'plain' if uefi is True else uefi
            code = os.path.join(OVMF_DIR, OVMF[firmware][0])
            efivars = efivars or self.efivars(firmware)
            if firmware != 'plain':
                args += SECURE_BOOT_ARGS
            args += ['-drive', 'if=pflash,format=raw,unit=0,readonly=on,file=' + code,
                     '-drive', 'if=pflash,format=raw,unit=1,file=' + efivars]
        args += list(disks) + list(extra)
        vm = Machine(args, self.log)
        vm.monitor_path = mon if monitor else None
        self.vms.append(vm)
        vm.boot()
        return vm

    def cdrom(self, iso=None, bootindex=0):
        """The CD drive with `iso` (default: the ISO) in it, at `bootindex`
        in the firmware's boot order.  (OVMF leaves an IDE CD drive that is
        not in the boot order in a state where Linux does not find it.)"""
        return ['-drive', 'if=none,id=cd,media=cdrom,readonly=on,format=raw,file='
                + (iso or self.iso),
                '-device', 'ide-cd,drive=cd,bus=ide.1,unit=0,bootindex=%d' % bootindex]

    def usb_stick(self, *isos, boot=True):
        """A USB stick per image in `isos` (default: the ISO) on one xHCI
        controller; the first one is the boot device when `boot`."""
        args = ['-device', 'qemu-xhci,id=xhci']
        for i, iso in enumerate(isos or [self.iso]):
            # snapshot=on: the guest may write, the image file never changes.
            args += ['-drive', 'if=none,id=stick%d,format=raw,snapshot=on,file=%s' % (i, iso),
                     '-device', 'usb-storage,bus=xhci.0,drive=stick%d%s'
                     % (i, ',bootindex=0' if boot and i == 0 else '')]
        return args

    def hard_disk(self):
        return ['-drive', 'if=none,id=hd,format=raw,snapshot=on,file=' + self.iso,
                '-device', 'ide-hd,drive=hd,bus=ide.0,unit=0,bootindex=0']

    @staticmethod
    def empty_cdrom():
        return ['-drive', 'if=ide,index=2,media=cdrom']

    @staticmethod
    def kernel_initrd(kernel, initrd, cmdline):
        """Instead of media: QEMU loads a kernel and initramfs itself, with
        no firmware boot or boot loader (the bench's Debian peer)."""
        return ['-kernel', kernel, '-initrd', initrd, '-append', cmdline]

    def image(self, name, mib, data=None):
        path = os.path.join(self.work, name)
        with open(path, 'wb') as f:
            if data:
                f.write(data)
            f.truncate(mib << 20)
        return path

    def close(self):
        for vm in self.vms:
            vm.stop()
        self.log.close()


def menu(vm, entry, uefi=False, default=False):
    """Wait for the boot menu, check it lists every entry, choose `entry`
    by its hotkey (or let the 3 s timeout pick the default)."""
    loader = 'GRUB' if uefi else 'isolinux'
    m = vm.wait(re.escape(MENU_TITLE), 'the %s boot menu' % loader, MENU_TIMEOUT)
    menu_start = m.start()
    # Fully drawn: the last entry is there.
    vm.wait(re.escape(MENU_LAST), 'the whole %s menu' % loader, 20)
    screen = vm.buf[menu_start:]
    if default:
        vm.note('no key: the menu timeout boots the default entry')
    else:
        # The hotkey goes first, before the 3 s countdown can run out: a
        # slow check here must not let the default entry boot instead.
        # Keys typed while the menu still draws wait in the UART.
        key, title = MENU[entry]
        vm.send(key, label='%r (hotkey of "%s")' % (key, title))
    squeezed = re.sub(r'\s+', ' ', screen)
    shown = [i for i in MENU if uefi or i not in UEFI_ONLY]
    missing = [MENU[i][1] for i in shown if MENU[i][1] not in squeezed]
    if missing:
        raise Fail('%s menu lacks %s' % (loader, ', '.join(map(repr, missing))))


def boot_line(vm, line):
    """BIOS: leave isolinux's menu for its boot: prompt (Esc) and boot
    `line`, a label followed by extra kernel arguments, e.g.
    'rescue rescue.term=xterm'. Arguments given twice: the last wins."""
    vm.wait(re.escape(MENU_TITLE), 'the isolinux boot menu', MENU_TIMEOUT)
    vm.wait(re.escape(MENU_LAST), 'the whole isolinux menu', 20)
    vm.send('\x1b', label='Esc (leave the menu for the boot: prompt)')
    vm.wait(r'boot: ?$', 'the isolinux boot: prompt', 30)
    vm.type_line(line)


def boot_rescue(vm, what='the rescue shell prompt', respawn=False):
    """From a chosen entry (or a shell respawn) to rescue-init's prompt."""
    if not respawn:
        vm.wait(r'rescue-init: ', 'rescue-init on the console', BOOT_TIMEOUT)
    vm.wait(PROMPT, what, BOOT_TIMEOUT)
    sh = Shell(vm, PROMPT)
    # Lines longer than busybox's 80-column guess would be redrawn.
    sh.run('stty cols 250', ok=False)
    return sh


def bare_shell(vm):
    """init=/bin/sh: no rescue-init. Wait for busybox sh, set a prompt we
    can match (typed split, so the echo of the command does not match)."""
    vm.wait(SH_FIRST_PROMPT, 'the /bin/sh prompt', BOOT_TIMEOUT)
    vm.wait_quiet(0.5, 5)
    vm.type_line("PS1='SH_''PROMPT# '")
    vm.wait(re.escape(SH_PROMPT), 'the new prompt', CMD_TIMEOUT)
    sh = Shell(vm, re.escape(SH_PROMPT))
    sh.run('stty cols 250', ok=False)
    return sh


def poweroff(vm, cmd='poweroff'):
    """Type poweroff/reboot; QEMU must end by itself, no panic on the way."""
    vm.type_line(cmd)
    vm.wait(r'rescue-init: shutting down: %s' % cmd, 'the init\'s shutdown message', 60)
    done = 'reboot: Power down' if cmd == 'poweroff' else 'reboot: Restarting system'
    vm.wait(re.escape(done), 'the kernel\'s "%s"' % done, 60)
    status = vm.expect_exit('QEMU to exit by itself after %s' % cmd, 30)
    if status != 0:
        raise Fail('QEMU exited with status %s after %s' % (status, cmd))


def require(cond, why):
    if not cond:
        raise Fail(why)


def root_device(sh):
    """(maj:min of /, name of that block device) as the guest sees them."""
    info = sh.out('cat /proc/self/mountinfo')
    root = None
    for line in info.splitlines():
        f = line.split()
        if len(f) > 4 and f[4] == '/' and re.match(r'\d+:\d+$', f[2]):
            root = f[2]
    require(root, 'no / in /proc/self/mountinfo')
    devs = sh.out('grep -H . /sys/class/block/*/dev')
    for line in devs.splitlines():
        m = re.match(r'/sys/class/block/([^/]+)/dev:(\d+:\d+)$', line.strip())
        if m and m.group(2) == root:
            return root, m.group(1)
    return root, None


def check_root_on_partition(sh, want='sda1'):
    num, name = root_device(sh)
    require(name == want, 'root filesystem is on %s (%s), not %s' % (name, num, want))
    out = sh.out('mount')
    require(re.search(r' on / type iso9660', out), '`mount` shows no iso9660 on /')




# ---------------------------------------------------------------------------
# Tests and the runner

TESTS = []


def test(func):
    # Only the suite being run: another suite imported for its helpers
    # (its fixtures) does not add its own tests.
    if func.__module__ == '__main__':
        TESTS.append(func)
    return func


def host(c, args, env=None):
    c.log.write('\n[boottest] host: %s\n' % shlex.join(args))
    r = subprocess.run(args, capture_output=True, text=True, env=env)
    c.log.write(r.stdout + r.stderr + '[boottest] exit status %d\n' % r.returncode)
    return r


def build_another_iso(c, name, **settings):
    """Another ISO in the test's work dir, from make's own inputs to
    image/build-iso.sh (exported as BUILD_ISO by `make check-<suite>`),
    with `settings` changed (e.g. SOURCE_DATE_EPOCH, SIGN_KEY).  Its path."""
    inputs = os.environ.get('BUILD_ISO')
    if not inputs:
        raise Fail('BUILD_ISO is not set: run this suite through make check-<suite>')
    env = dict(os.environ)
    env.update(a.split('=', 1) for a in shlex.split(inputs))
    iso = os.path.join(c.work, name + '.iso')
    env.update(ISO=iso, WORK=os.path.join(c.work, name + '.work'), **settings)
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = host(c, [os.path.join(top, 'image', 'build-iso.sh')], env=env)
    require(r.returncode == 0, 'build-iso.sh for %s failed: %s' % (name, r.stderr.strip()[-300:]))
    return iso




def tail(path, n=25):
    with open(path, encoding='utf-8', errors='replace') as f:
        lines = [l for l in f.read().splitlines() if l.strip()]
    return lines[-n:]


def run_test(func, iso, logdir):
    c = Ctx(func.__name__, iso, logdir)
    t0 = time.monotonic()
    err = None
    try:
        func(c)
    except Fail as e:
        err = str(e)
    except Exception as e:      # a harness bug still fails only this test
        err = 'harness error: %s: %s' % (type(e).__name__, e)
    finally:
        c.log.write('\n[boottest] %s\n' % ('PASS' if err is None else 'FAIL: ' + err))
        c.close()
    secs = time.monotonic() - t0
    if err is None:
        shutil.rmtree(c.work, ignore_errors=True)
        print('PASS %-20s %5.1f s' % (c.name, secs), flush=True)
        return True
    print('FAIL %-20s %5.1f s  %s' % (c.name, secs, err))
    print('     log: %s (last lines:)' % c.log_path)
    for line in tail(c.log_path):
        print('     | ' + line)
    sys.stdout.flush()
    return False


# The suite's own command-line options (main's add_options), for its tests.
OPTIONS = argparse.Namespace()


def main(doc, add_options=None):
    """A suite's command line: run its tests (all, or those named).
    add_options(parser) adds the suite's own options; the tests read them
    from qemu.OPTIONS."""
    global OPTIONS
    p = argparse.ArgumentParser(description=doc.split('\n\n')[0])
    p.add_argument('--iso', default='build/rescue.iso')
    p.add_argument('--logdir', default='build/test-logs')
    p.add_argument('--summary', help='file for the "N passed, N failed" line')
    p.add_argument('--list', action='store_true', help='list the tests and exit')
    p.add_argument('tests', nargs='*', help='tests to run (default: all)')
    if add_options:
        add_options(p)
    a = OPTIONS = p.parse_args()
    by_name = {f.__name__: f for f in TESTS}
    if a.list:
        for f in TESTS:
            print('%-20s %s' % (f.__name__, f.__doc__.split('\n')[0]))
        return 0
    names = [w for t in a.tests for w in t.replace(',', ' ').split()]
    unknown = [n for n in names if n not in by_name]
    if unknown:
        p.error('unknown test(s): %s (see --list)' % ' '.join(unknown))
    todo = [by_name[n] for n in names] if names else TESTS
    os.makedirs(a.logdir, exist_ok=True)
    passed = failed = 0
    if not os.path.isfile(a.iso):
        print('FAIL no ISO at %s' % a.iso)
        failed = len(todo)
    else:
        iso = os.path.abspath(a.iso)
        print('boot tests on %s, logs in %s, TIMEOUT_FACTOR=%g'
              % (iso, a.logdir, TIMEOUT_FACTOR), flush=True)
        for func in todo:
            if run_test(func, iso, os.path.abspath(a.logdir)):
                passed += 1
            else:
                failed += 1
    summary = '%d passed, %d failed' % (passed, failed)
    if a.summary:
        with open(a.summary, 'w') as f:
            f.write(summary + '\n')
    print(summary)
    return 1 if failed else 0

