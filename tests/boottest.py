#!/usr/bin/python3
"""Boot tests for the rescue ISO.

Every test boots the real ISO in QEMU (always -accel tcg), picks its entry in
the real boot menu (isolinux on BIOS, GRUB on UEFI) by typing on the serial
console, then works at the shell prompt like a person would: types a command,
reads the answer.

Every wait names what it waits for, has a timeout (times TIMEOUT_FACTOR) and
a list of named bad patterns that fail the test at once (a kernel panic is
reported by name within a second, not as a timeout a minute later).
Each test keeps its whole console log in LOGDIR/<test>.log, with every
command typed written into it; a failure prints the log's path and its tail.

    tests/boottest.py --iso build/rescue.iso --logdir build/test-logs [TEST...]
    tests/boottest.py --list

Ideas from kunit_kernel.py, virtme-ng, U-Boot test/py console_base.py and
Buildroot's emulator.py; the code is our own.
"""

import argparse
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

import pexpect

QEMU = 'qemu-system-x86_64'
OVMF_CODE = '/usr/share/OVMF/OVMF_CODE_4M.fd'
OVMF_VARS = '/usr/share/OVMF/OVMF_VARS_4M.fd'

# Boot menu: (hotkey, title) per entry, from the contract.
MENU = {
    'rescue': ('r', 'Rescue system'),
    'shell': ('s', 'Recovery shell (init=/bin/sh)'),
    'check': ('t', 'Smoke test (rescue.check)'),
    'nodevtmpfs': ('w', 'Without kernel devtmpfs mount (devtmpfs.mount=0)'),
    'hd': ('h', 'Boot from first hard disk'),
    'reboot': ('b', 'Reboot'),
    'poweroff': ('p', 'Power off'),
}
MENU_TITLE = MENU['rescue'][1]          # what tells us the menu is on screen

PROMPT = r'rescue:[^\n#]*# '            # rescue-init's PS1 'rescue:\w# '
SH_PROMPT = 'SH_PROMPT# '               # what we set PS1 to in a bare /bin/sh

# Named bad patterns: any of them fails the wait at once.
BAD = [
    ('kernel panic', r'Kernel panic'),
    ('init was killed', r'Attempted to kill init'),
    ('root not mountable', r'Unable to mount root'),
    ('smoke test failed', r'rescue-check: FAIL[^\n]*'),
    ('shell respawn loop', r'[^\n]*not respawning[^\n]*'),
    ('kernel oops', r'\bOops\b|\bBUG: [^\n]*|general protection fault'),
]
# `Waiting for root device` is fine for a moment (USB sticks enumerate
# late); it is bad only when no root gets mounted within this many seconds.
ROOT_WAIT = ('Waiting for root device', r'Waiting for root device[^\n]*')
ROOT_WAIT_LIMIT = 20
ROOT_FOUND = r'VFS: Mounted root|Run [^\n]* as init|rescue-init:|Freeing unused'

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
# A kernel message on the console (CONFIG_PRINTK_TIME).
KMSG_LINE = re.compile(r'^\[ *\d+\.\d+\] [^\n]*\n?', re.M)


class Fail(Exception):
    """A test failure with a one-line reason."""


def clean(text):
    text = _ESC_MOVE.sub('\n', text)
    text = _ESC_ANY.sub('', text)
    text = re.sub(r'\r+\n', '\n', text).replace('\r', '\n')
    return _CTRL.sub('', text)


def timeout(seconds):
    return seconds * TIMEOUT_FACTOR


class Machine:
    """One QEMU run whose serial console is a pexpect pty.

    Console output is cleaned of control sequences and kept in self.buf;
    self.pos is where the next wait starts searching, so every wait sees
    only what arrived after the previous match.
    """

    def __init__(self, args, log):
        self.args = args
        self.log = log
        self.buf = ''
        self.pos = 0
        self.raw_hold = ''
        self.start = time.monotonic()
        self.root_wait_since = None
        self.child = None
        self.exitstatus = None
        self.received = 0       # raw characters read so far
        self.commands = 0       # commands run, numbers their end markers

    def note(self, text):
        """A harness line in the log, set apart from console output."""
        t = time.monotonic() - self.start
        self.log.write('\n[boottest %6.1fs] %s\n' % (t, text))
        self.log.flush()

    def boot(self):
        self.note('run: ' + shlex.join(self.args))
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

    def wait(self, want, what, secs, bad=BAD, eof_ok=False):
        """Wait for regex `want` (or a list of them); return the match.

        Fails at once on a bad pattern, when QEMU exits, or on timeout.
        """
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

    def expect_exit(self, what, secs=60, bad=BAD):
        """QEMU must end by itself (poweroff, reboot with -no-reboot)."""
        self.wait(r'(?!x)x', what, secs, bad=bad, eof_ok=True)
        return self.exitstatus

    def stop(self):
        if self.child is not None and self.exitstatus is None:
            self.note('killing QEMU')
            self.child.close(force=True)
            self.exitstatus = -1


class Shell:
    """A shell on the console, reached through `prompt`."""

    def __init__(self, vm, prompt):
        self.vm = vm
        self.prompt = prompt

    def run(self, cmd, secs=CMD_TIMEOUT, ok=True, bad=BAD):
        """Type `cmd`, return (status, output). The status comes from an
        `echo` of $? that the command's own echo cannot match."""
        self.vm.commands += 1
        mark = '@@%d@@' % self.vm.commands
        self.vm.type_line('%s; echo %s$?@@' % (cmd, mark))
        m = self.vm.wait(re.escape(mark) + r'(\d+)@@', 'the answer to: ' + cmd,
                         secs, bad=bad)
        before = self.vm.buf[:m.start()]
        # Output: from the line after our typed command up to the marker.
        start = self.vm.buf.rfind(mark + '$?@@', 0, m.start())
        start = self.vm.buf.find('\n', start) + 1 if start >= 0 else 0
        # Kernel messages may land in the middle of the answer: drop them.
        out = KMSG_LINE.sub('', before[start:])
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

    def machine(self, disks=(), mem=256, uefi=False, extra=()):
        """QEMU with the serial console on our pty; `disks` are QEMU args."""
        args = [QEMU, '-accel', 'tcg', '-nodefaults', '-no-reboot',
                '-no-user-config', '-display', 'none', '-vga', 'std',
                '-m', str(mem), '-smp', '1',
                '-chardev', 'stdio,id=con,signal=off', '-serial', 'chardev:con']
        if uefi:
            vars_copy = os.path.join(self.work, 'OVMF_VARS_4M.fd')
            shutil.copyfile(OVMF_VARS, vars_copy)
            args += ['-drive', 'if=pflash,format=raw,unit=0,readonly=on,file=' + OVMF_CODE,
                     '-drive', 'if=pflash,format=raw,unit=1,file=' + vars_copy]
        args += list(disks) + list(extra)
        vm = Machine(args, self.log)
        self.vms.append(vm)
        vm.boot()
        return vm

    def cdrom(self):
        return ['-drive', 'if=none,id=cd,media=cdrom,readonly=on,format=raw,file=' + self.iso,
                '-device', 'ide-cd,drive=cd,bus=ide.1,unit=0,bootindex=0']

    def usb_stick(self):
        # snapshot=on: the guest may write, the ISO file never changes.
        return ['-device', 'qemu-xhci,id=xhci',
                '-drive', 'if=none,id=stick,format=raw,snapshot=on,file=' + self.iso,
                '-device', 'usb-storage,bus=xhci.0,drive=stick,bootindex=0']

    def hard_disk(self):
        return ['-drive', 'if=none,id=hd,format=raw,snapshot=on,file=' + self.iso,
                '-device', 'ide-hd,drive=hd,bus=ide.0,unit=0,bootindex=0']

    @staticmethod
    def empty_cdrom():
        return ['-drive', 'if=ide,index=2,media=cdrom']

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
    # Fully drawn (the last entry is there) and reading keys (quiet).
    vm.wait(re.escape(MENU['poweroff'][1]), 'the whole %s menu' % loader, 20)
    vm.wait_quiet(0.5, 5)
    screen = vm.buf[menu_start:]
    squeezed = re.sub(r'\s+', ' ', screen)
    missing = [t for _, t in MENU.values() if t not in squeezed]
    if missing:
        raise Fail('%s menu lacks %s' % (loader, ', '.join(map(repr, missing))))
    if default:
        vm.note('no key: the menu timeout boots the default entry')
    else:
        key, title = MENU[entry]
        vm.send(key, label='%r (hotkey of "%s")' % (key, title))


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
    vm.wait(r'[#$] $', 'the /bin/sh prompt', BOOT_TIMEOUT)
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
# The tests

TESTS = []


def test(func):
    TESTS.append(func)
    return func


DEV_NODES = 'console null zero full random urandom tty tty0 ttyS0 ptmx kmsg sr0 loop0'.split()
WORLD_RW = 'null zero full random urandom tty ptmx'.split()
DEVTMPFS_REPORT = (r'rescue-init: /dev is devtmpfs, mounted by the kernel: '
                   r'(\d+) nodes \((\d+) block, (\d+) char\)')


def parse_ls(out):
    """`ls -l` lines -> {name: (mode, owner, group, major:minor or size)}."""
    nodes = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) < 9 or not re.match(r'[-bcdlps][-rwxsStT]{9}', f[0]):
            continue
        if f[0][0] in 'bc':     # crw-rw-rw- 1 root root 1, 3 Jan 1 00:00 null
            nodes[f[-1]] = (f[0], f[2], f[3], f[4] + f[5])
        else:
            nodes[f[-1]] = (f[0], f[2], f[3], f[4])
    return nodes


@test
def bios_cd(c):
    """BIOS CD, default entry: /dev is the kernel's devtmpfs, full and sane."""
    # The ISO's own /dev must be empty: whatever is there at run time came
    # from the kernel.
    r = subprocess.run(['xorriso', '-indev', c.iso, '-find', '/dev'],
                       capture_output=True, text=True)
    found = [l.strip().strip("'") for l in r.stdout.splitlines() if l.strip()]
    c.log.write('[boottest] xorriso -indev ISO -find /dev: %s\n' % found)
    require(r.returncode == 0, 'xorriso -find /dev failed: ' + r.stderr.strip()[-200:])
    require(found == ['/dev'], 'the ISO\'s /dev is not an empty directory: %s' % found)

    vm = c.machine(c.cdrom())
    menu(vm, 'rescue', default=True)
    m = vm.wait(DEVTMPFS_REPORT, 'the init\'s devtmpfs report', BOOT_TIMEOUT)
    require(int(m.group(1)) > 0, 'devtmpfs report counts no nodes')
    sh = boot_rescue(vm)
    listing = sh.out('ls /dev').split()
    missing = [n for n in DEV_NODES if n not in listing]
    require(not missing, '/dev lacks %s' % ' '.join(missing))
    nodes = parse_ls(sh.out('ls -l /dev'))
    for n in WORLD_RW:
        require(n in nodes and nodes[n][0] == 'crw-rw-rw-',
                '/dev/%s is %s, not crw-rw-rw-' % (n, nodes.get(n)))
    require(nodes['ptmx'][3] == '5,2', '/dev/ptmx is %s, not char 5:2' % nodes['ptmx'][3])
    blocks = {n: v for n, v in nodes.items() if v[0].startswith('b')}
    require(blocks, '`ls -l /dev` shows no block devices')
    for n, v in blocks.items():
        require(v[0] == 'brw-------' and v[1] in ('root', '0'),
                '/dev/%s is %s %s, not brw------- root' % (n, v[0], v[1]))
    out = sh.out('mount')
    require(re.search(r'^devtmpfs on /dev type devtmpfs', out, re.M),
            '`mount` shows no devtmpfs on /dev')
    poweroff(vm)


@test
def bios_shell(c):
    """Recovery entry (init=/bin/sh): the shell is PID 1, /dev populated."""
    vm = c.machine(c.cdrom())
    menu(vm, 'shell')
    sh = bare_shell(vm)
    require(sh.out('echo $$').strip() == '1', 'the shell is not PID 1')
    listing = sh.out('ls /dev').split()
    missing = [n for n in DEV_NODES if n not in listing]
    require(not missing, '/dev lacks %s' % ' '.join(missing))
    sh.run('mount -t proc proc /proc')
    out = sh.out('cat /proc/mounts')
    require(re.search(r'^devtmpfs /dev devtmpfs', out, re.M),
            '/proc/mounts shows no devtmpfs on /dev')
    require('init=/bin/sh' in sh.out('cat /proc/cmdline'), 'no init=/bin/sh on the command line')


@test
def bios_nodevtmpfs(c):
    """devtmpfs.mount=0 entry: the init warns, mounts devtmpfs itself, says so."""
    vm = c.machine(c.cdrom())
    menu(vm, 'nodevtmpfs')
    vm.wait(r'rescue-init: WARNING: /dev is not devtmpfs[^\n]*', 'the init\'s warning', BOOT_TIMEOUT)
    m = vm.wait(r'rescue-init: mounted devtmpfs on /dev itself: (\d+) nodes', 'the init\'s fallback report',
                BOOT_TIMEOUT)
    require(int(m.group(1)) > 0, 'the fallback devtmpfs has no nodes')
    sh = boot_rescue(vm)
    require('devtmpfs.mount=0' in sh.out('cat /proc/cmdline'), 'no devtmpfs.mount=0 on the command line')
    out = sh.out('mount')
    require(re.search(r'^devtmpfs on /dev type devtmpfs', out, re.M),
            '`mount` shows no devtmpfs on /dev after the fallback')
    listing = sh.out('ls /dev').split()
    missing = [n for n in DEV_NODES if n not in listing]
    require(not missing, '/dev lacks %s after the fallback' % ' '.join(missing))
    poweroff(vm)


@test
def bios_nodevtmpfs_sh(c):
    """boot: nodevtmpfs init=/bin/sh -- nobody mounts devtmpfs, /dev is empty."""
    vm = c.machine(c.cdrom())
    vm.wait(re.escape(MENU_TITLE), 'the isolinux boot menu', MENU_TIMEOUT)
    vm.wait(re.escape(MENU['poweroff'][1]), 'the whole isolinux menu', 20)
    vm.wait_quiet(0.5, 5)
    vm.send('\x1b', label='Esc (leave the menu for the boot: prompt)')
    vm.wait(r'boot: ?$', 'the isolinux boot: prompt', 30)
    vm.type_line('nodevtmpfs init=/bin/sh')
    # The kernel opened the console for init on its own early rootfs,
    # before mounting the real root, so the shell still talks to us.
    sh = bare_shell(vm)
    require(sh.out('echo $$').strip() == '1', 'the shell is not PID 1')
    listing = sh.out('ls -A /dev', ok=False)
    require(not listing.split(), '/dev is not empty without the kernel\'s mount: %r' % listing.strip())
    require(sh.out('ls -A /dev | wc -l').strip() == '0', '/dev is not empty')
    sh.run('mount -t proc proc /proc')
    cmdline = sh.out('cat /proc/cmdline')
    require('devtmpfs.mount=0' in cmdline and 'init=/bin/sh' in cmdline,
            'the command line lacks devtmpfs.mount=0 init=/bin/sh: %r' % cmdline.strip())
    mounts = sh.out('cat /proc/mounts')
    require(not re.search(r' /dev devtmpfs', mounts), 'devtmpfs is mounted on /dev: %r' % mounts)
    require('devtmpfs: mounted' not in vm.buf, 'the kernel said "devtmpfs: mounted"')
    require('rescue-init:' not in vm.buf, 'rescue-init ran despite init=/bin/sh')


def usb_or_hd(c, disks, uefi=False):
    vm = c.machine(disks, uefi=uefi)
    menu(vm, 'rescue', uefi=uefi)
    sh = boot_rescue(vm)
    check_root_on_partition(sh)
    m = re.search(r'VFS: Mounted root \(iso9660 filesystem\) readonly on device (\d+:\d+)', vm.buf)
    if m:
        require(m.group(1) == '8:1', 'kernel mounted root from %s, not 8:1 (sda1)' % m.group(1))
    poweroff(vm)


@test
def bios_usb(c):
    """BIOS USB stick (xHCI + usb-storage): root is sda1."""
    usb_or_hd(c, c.usb_stick())


@test
def bios_usb_emptycd(c):
    """BIOS USB stick plus an empty CD drive: the kernel skips the drive."""
    usb_or_hd(c, c.usb_stick() + c.empty_cdrom())


@test
def bios_hd(c):
    """BIOS, the ISO as a plain IDE hard disk: root is sda1."""
    usb_or_hd(c, c.hard_disk())


@test
def bios_hd_emptycd(c):
    """BIOS IDE hard disk plus an empty CD drive: root is sda1."""
    usb_or_hd(c, c.hard_disk() + c.empty_cdrom())


@test
def uefi_cd(c):
    """UEFI (OVMF) from CD: GRUB's menu, root on sr0."""
    vm = c.machine(c.cdrom(), uefi=True)
    menu(vm, 'rescue', uefi=True)
    sh = boot_rescue(vm)
    num, name = root_device(sh)
    require(name == 'sr0', 'root filesystem is on %s (%s), not sr0' % (name, num))
    require(sh.out('ls /sys/firmware/efi >/dev/null && echo EFI-yes').strip().endswith('EFI-yes'),
            'the kernel did not boot through UEFI (no /sys/firmware/efi)')
    poweroff(vm)


@test
def uefi_usb(c):
    """UEFI (OVMF) from a USB stick: GRUB's menu, root on sda1."""
    vm = c.machine(c.usb_stick(), uefi=True)
    menu(vm, 'rescue', uefi=True)
    sh = boot_rescue(vm)
    check_root_on_partition(sh)
    require(sh.out('ls /sys/firmware/efi >/dev/null && echo EFI-yes').strip().endswith('EFI-yes'),
            'the kernel did not boot through UEFI (no /sys/firmware/efi)')
    poweroff(vm)


@test
def devices(c):
    """virtio-blk, NVMe and AHCI disks appear in /dev and in the banner."""
    vda = c.image('virtio.img', 64)
    nvme = c.image('nvme.img', 32)
    ahci = c.image('ahci.img', 48)
    disks = c.cdrom() + [
        '-drive', 'if=none,id=d1,format=raw,file=' + vda, '-device', 'virtio-blk-pci,drive=d1',
        '-drive', 'if=none,id=d2,format=raw,file=' + nvme,
        '-device', 'nvme,drive=d2,serial=rescue-nvme',
        '-device', 'ahci,id=ahci',
        '-drive', 'if=none,id=d3,format=raw,file=' + ahci,
        '-device', 'ide-hd,bus=ahci.0,drive=d3,model=RESCUE-AHCI']
    vm = c.machine(disks)
    menu(vm, 'rescue')
    sh = boot_rescue(vm)
    banner = dict(re.findall(r'rescue-init: disk (\S+) ([^\n]*)', vm.buf))
    c.log.write('\n[boottest] banner disks: %s\n' % banner)
    models = sh.out('grep -H . /sys/block/sd*/device/model')
    m = re.search(r'/sys/block/(sd[a-z]+)/device/model:RESCUE-AHCI', models)
    require(m, 'no sdX with the AHCI disk\'s model RESCUE-AHCI')
    sdx = m.group(1)
    listing = sh.out('ls /dev').split()
    for name, size in (('vda', '64'), ('nvme0n1', '32'), (sdx, '48')):
        require(name in listing, '/dev/%s is missing' % name)
        require(name in banner, 'the init\'s banner has no "rescue-init: disk %s" line' % name)
        require(banner[name].startswith(size), 'the banner gives %s as %r, expected %s MiB'
                % (name, banner[name], size))
    serial = sh.out('cat /sys/block/nvme0n1/device/serial').strip()
    require(serial == 'rescue-nvme', 'nvme0n1 has serial %r, not rescue-nvme' % serial)
    poweroff(vm)


def sha256(path):
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            h.update(block)
    return h.hexdigest()


def host(c, args):
    c.log.write('\n[boottest] host: %s\n' % shlex.join(args))
    r = subprocess.run(args, capture_output=True, text=True)
    c.log.write(r.stdout + r.stderr + '[boottest] exit status %d\n' % r.returncode)
    return r


@test
def rescue_work(c):
    """Fix-up work on an ext4 disk; an untouched second disk stays identical."""
    tree = os.path.join(c.work, 'tree')
    os.makedirs(os.path.join(tree, 'etc'))
    known = 'rescue-known-content %s\n' % c.name
    with open(os.path.join(tree, 'etc', 'known.txt'), 'w') as f:
        f.write(known)
    data = c.image('data.img', 64)
    r = host(c, ['mke2fs', '-q', '-F', '-t', 'ext4', '-L', 'rescuedata', '-d', tree, data])
    require(r.returncode == 0, 'mke2fs -d failed on the host')
    other = c.image('other.img', 16, data=os.urandom(1 << 20) * 3)
    other_sum = sha256(other)
    disks = c.cdrom() + [
        '-drive', 'if=none,id=d1,format=raw,file=' + data, '-device', 'virtio-blk-pci,drive=d1',
        '-drive', 'if=none,id=d2,format=raw,file=' + other, '-device', 'virtio-blk-pci,drive=d2']
    vm = c.machine(disks)
    menu(vm, 'rescue')
    sh = boot_rescue(vm)
    sh.run('e2fsck -n /dev/vda', secs=60)
    mnt = '/mnt'
    sh.run('mount -t ext4 /dev/vda %s' % mnt)
    out = sh.out('cat %s/etc/known.txt' % mnt)
    require(known.strip() in out, 'the known file reads %r' % out.strip())
    sh.run('echo written-in-rescue > %s/rescued.txt' % mnt)
    sh.run('sync')
    sh.run('umount %s' % mnt)
    poweroff(vm)
    r = host(c, ['debugfs', '-R', 'cat /rescued.txt', data])
    require('written-in-rescue' in r.stdout, 'the new file is not on the disk (debugfs: %r)'
            % (r.stdout + r.stderr).strip()[-200:])
    r = host(c, ['e2fsck', '-fn', data])
    require(r.returncode == 0, 'e2fsck -fn of the disk is not clean (status %d)' % r.returncode)
    require(sha256(other) == other_sum, 'the untouched second disk changed')


PROC_STAT = re.compile(r'^(\d+) \((.*)\) ([A-Za-z]) ', re.M)


@test
def pid1(c):
    """PID 1: exit and kill -9 of the shell give a new one, orphans are
    reaped, poweroff ends QEMU cleanly."""
    vm = c.machine(c.cdrom())
    menu(vm, 'rescue')
    sh = boot_rescue(vm)
    vm.type_line('exit')
    vm.wait(r'rescue-init: shell exited \(status \d+\), starting a new one',
            'the init starting a new shell after exit', 30)
    sh = boot_rescue(vm, 'a new prompt after exit', respawn=True)
    vm.type_line('kill -9 $$')
    vm.wait(r'rescue-init: shell exited[^\n]*, starting a new one',
            'the init starting a new shell after kill -9', 30)
    sh = boot_rescue(vm, 'a new prompt after kill -9', respawn=True)
    # An orphan: sh -c exits at once, its background sleep is re-parented
    # to PID 1 and must be reaped when it ends.
    pid = sh.out("sh -c 'sleep 3 & echo $!'").strip().splitlines()[-1].strip()
    require(pid.isdigit(), 'no PID for the orphan: %r' % pid)
    ppid = sh.out('grep PPid /proc/%s/status' % pid)
    require(re.search(r'PPid:\s*1\b', ppid), 'the orphan %s was not re-parented to PID 1: %r'
            % (pid, ppid.strip()))
    sh.run('sleep 5')
    sh.out('ps')
    stats = sh.out('cat /proc/[0-9]*/stat 2>/dev/null', ok=False)
    zombies = [(p, n) for p, n, s in PROC_STAT.findall(stats) if s == 'Z']
    require(not zombies, 'zombies left: %s' % zombies)
    left, _ = sh.run('test -e /proc/%s' % pid, ok=False)
    require(left != 0, 'the orphan %s is still in /proc after it ended' % pid)
    poweroff(vm)


@test
def pid1_reboot(c):
    """`reboot` ends QEMU cleanly (-no-reboot) with the shutdown messages."""
    vm = c.machine(c.cdrom())
    menu(vm, 'rescue')
    sh = boot_rescue(vm)
    poweroff(vm, 'reboot')


@test
def smoke_check(c):
    """Smoke-test entry: report, rescue-check: PASS, QEMU exits by itself."""
    vm = c.machine(c.cdrom())
    menu(vm, 'check')
    vm.wait(r'rescue-check: PASS', 'rescue-check: PASS', BOOT_TIMEOUT + 60)
    keys = re.findall(r'^rescue-check: (\S+)', vm.buf, re.M)
    require(len(keys) > 1, 'rescue-check printed no report before PASS')
    status = vm.expect_exit('QEMU to exit by itself after the check', 60)
    require(status == 0, 'QEMU exited with status %s' % status)
    require('reboot: Power down' in vm.buf, 'no "reboot: Power down" after the check')


@test
def small_mem(c):
    """A 64 MiB machine boots to the shell."""
    vm = c.machine(c.cdrom(), mem=64)
    menu(vm, 'rescue')
    sh = boot_rescue(vm)
    out = sh.out('cat /proc/meminfo')
    m = re.search(r'MemTotal:\s+(\d+) kB', out)
    require(m and int(m.group(1)) < 64 * 1024, 'MemTotal is not below 64 MiB: %r' % out[:80])
    poweroff(vm)


def menu_ends_qemu(c, entry, uefi):
    vm = c.machine(c.cdrom(), uefi=uefi)
    menu(vm, entry, uefi=uefi)
    status = vm.expect_exit('QEMU to exit after the menu\'s "%s"' % MENU[entry][1], 60)
    require(status == 0, 'QEMU exited with status %s' % status)
    require('Linux version' not in vm.buf and 'rescue-init' not in vm.buf,
            '"%s" started Linux' % MENU[entry][1])


@test
def menu_poweroff(c):
    """Extra: the isolinux "Power off" entry turns the machine off."""
    menu_ends_qemu(c, 'poweroff', uefi=False)


@test
def menu_reboot(c):
    """Extra: the isolinux "Reboot" entry resets (QEMU exits, -no-reboot)."""
    menu_ends_qemu(c, 'reboot', uefi=False)


# A boot sector that writes one line to COM1 and halts:
#   cli; xor %ax,%ax; mov %ax,%ds; mov $msg,%si; mov $0x3f8,%dx
#   1: lodsb; test %al,%al; jz 2f; out %al,(%dx); jmp 1b;  2: hlt; jmp 2b
#   msg: .asciz "\r\nhd-mbr: booted from the first hard disk\r\n"
# (as --32, ld -Ttext 0x7c00 --oformat binary), plus the 0x55aa signature.
HD_MBR = bytes.fromhex(
    'fa31c08ed8be167cbaf803ac84c07403eeebf8f4ebfd0d0a68642d6d62723a20626f6f'
    '7465642066726f6d207468652066697273742068617264206469736b0d0a00')
HD_MBR = HD_MBR.ljust(510, b'\0') + b'\x55\xaa'


@test
def menu_hd(c):
    """Extra: the isolinux "Boot from first hard disk" entry boots the disk."""
    disk = c.image('hd.img', 1, data=HD_MBR)
    vm = c.machine(c.cdrom() + ['-drive', 'if=none,id=d1,format=raw,file=' + disk,
                                '-device', 'ide-hd,drive=d1,bus=ide.0,unit=0'])
    menu(vm, 'hd')
    vm.wait(r'hd-mbr: booted from the first hard disk', 'the hard disk\'s boot sector', 30)
    require('Linux version' not in vm.buf, 'Linux started instead')


@test
def uefi_menu_poweroff(c):
    """Extra: GRUB's "Power off" entry turns the machine off."""
    menu_ends_qemu(c, 'poweroff', uefi=True)


# ---------------------------------------------------------------------------


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


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--iso', default='build/rescue.iso')
    p.add_argument('--logdir', default='build/test-logs')
    p.add_argument('--summary', help='file for the "N passed, N failed" line')
    p.add_argument('--list', action='store_true', help='list the tests and exit')
    p.add_argument('tests', nargs='*', help='tests to run (default: all)')
    a = p.parse_args()
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


if __name__ == '__main__':
    sys.exit(main())
