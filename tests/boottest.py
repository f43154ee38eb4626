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


The machine, console and runner are in qemu.py.
"""

import os
import re
import subprocess
import sys
import time
import uuid

import ondisk
from qemu import (BAD, BOOT_TIMEOUT, MENU, PROMPT, Fail, bare_shell, boot_line,
                  boot_rescue, check_root_on_partition, host, main, menu,
                  poweroff, require, root_device, sha256, test)


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
    boot_line(vm, 'nodevtmpfs init=/bin/sh')
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
    require(m, 'the kernel never said "VFS: Mounted root (iso9660 filesystem) readonly"')
    require(m.group(1) == '8:1', 'kernel mounted root from %s, not 8:1 (sda1)' % m.group(1))
    poweroff(vm)


@test
def root_wait_guard(c):
    """Harness: a root that never appears fails by name within the
    root-wait limit, not as a timeout."""
    vm = c.machine(c.cdrom())
    boot_line(vm, 'rescue root=/dev/vdz,/dev/vdy')
    try:
        vm.wait(PROMPT, 'a prompt (there is no /dev/vdz or /dev/vdy)', BOOT_TIMEOUT)
    except Fail as e:
        require('lasted more than' in str(e),
                'the harness did not report the endless root wait: %s' % e)
        return
    raise Fail('a prompt came with root=/dev/vdz,/dev/vdy')


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


@test
def uefi_menu_reboot(c):
    """GRUB's "Reboot" entry resets the machine (QEMU exits, -no-reboot)."""
    menu_ends_qemu(c, 'reboot', uefi=True)


@test
def uefi_menu_hd(c):
    """GRUB's "Boot from first hard disk" entry hands back to the firmware,
    which goes on with its boot order (with no other bootable disk here,
    OVMF's next option is its setup screen, UiApp)."""
    vm = c.machine(c.cdrom(), uefi=True)
    menu(vm, 'hd', uefi=True)
    vm.wait(r'BdsDxe: (loading|starting) Boot[0-9A-F]+ "UiApp"',
            'OVMF going on with its boot order after GRUB', 60)
    require('Linux version' not in vm.buf, 'Linux started instead')


# ---------------------------------------------------------------------------
# PID 1 and what the README promises about it.  The second console is the
# screen (tty0, the other console= on the ISO's command line): typed on
# through QEMU's monitor (sendkey) and read back from /dev/vcs1.  A second
# serial port cannot be a second console: the kernel has one console per
# driver, and console=ttyS0 console=ttyS1 enables only ttyS0.

NOT_RESPAWN_LOOP = [b for b in BAD if b[0] != 'shell respawn loop']
# PIDs of what runs on the screen's console (found by its fd 0).
ON_TTY0 = ("ls -l /proc/[0-9]*/fd/0 2>/dev/null | "
           "sed -n 's|.* /proc/\\([0-9]*\\)/fd/0 -> /dev/tty0$|\\1|p'")


def screen(sh):
    """The text on the screen (VT 1), one string per row."""
    cols = sh.out('stty -F /dev/tty1 size').split()[1]
    # Marked rows: a screen row may look like a kernel message, which
    # Shell.run drops from answers.
    out = sh.out("fold -w %s /dev/vcs1 | sed 's/^/|/'" % cols)
    return [line[1:].rstrip() for line in out.splitlines() if line.startswith('|')]


@test
def consoles(c):
    """A shell on every console: the screen (tty0) gets one with the banner,
    and a command typed on its keyboard runs."""
    vm = c.machine(c.cdrom(), monitor=True)
    menu(vm, 'rescue')
    sh = boot_rescue(vm)
    active = sh.out('cat /sys/class/tty/console/active').split()
    require(active == ['tty0', 'ttyS0'], 'the consoles are %s, not tty0 ttyS0' % active)
    rows = screen(sh)
    c.log.write('\n[boottest] screen:\n%s\n' % '\n'.join(rows))
    require([r for r in rows if 'rescue-init: rescue system, Linux' in r and r.endswith('on tty0')],
            'the screen shows no banner for tty0')
    require([r for r in rows if 'rescue-init: /dev is devtmpfs, mounted by the kernel' in r],
            'the screen shows no /dev report')
    require(rows and [r for r in rows if r.startswith('rescue:/#')], 'no prompt on the screen')
    vm.type_keys('tty > /tmp/typed-on-screen\n')
    sh.run('sleep 2')
    got = sh.out('cat /tmp/typed-on-screen').strip()
    require(got == '/dev/tty0', 'the command typed on the screen wrote %r, not /dev/tty0' % got)
    poweroff(vm)


@test
def job_control(c):
    """Ctrl-C stops `sleep`, Ctrl-Z suspends it; the console log level is 5."""
    vm = c.machine(c.cdrom())
    menu(vm, 'rescue')
    sh = boot_rescue(vm)
    vm.type_line('sleep 300')
    time.sleep(1)
    vm.send('\x03', label='Ctrl-C')
    vm.wait(PROMPT, 'the prompt after Ctrl-C', 15)
    require(sh.out('echo rc=$?').strip() == 'rc=130', 'sleep did not end on SIGINT')
    vm.type_line('sleep 300')
    time.sleep(1)
    vm.send('\x1a', label='Ctrl-Z')
    vm.wait(r'Stopped[^\n]*sleep 300', 'ash saying the job stopped', 15)
    vm.wait(PROMPT, 'the prompt after Ctrl-Z', 15)
    require(re.search(r'Stopped\s+sleep 300', sh.out('jobs')), '`jobs` does not list the stopped sleep')
    sh.run('kill -9 %1')
    level = sh.out('cat /proc/sys/kernel/printk').split()
    require(level and level[0] == '5', 'console log level is %s, not 5' % level[:1])
    poweroff(vm)


@test
def respawn_limit(c):
    """A shell that dies 5 times in 10 s rests; kill -HUP 1 brings it back."""
    vm = c.machine(c.cdrom())
    menu(vm, 'rescue')
    sh = boot_rescue(vm)
    require(sh.out(ON_TTY0).split(), 'no shell runs on tty0')
    # Kill the screen's shell as fast as init brings it back, for 10 s.
    sh.run('i=0; while [ $i -lt 40 ]; do kill -9 $(%s) 2>/dev/null; sleep 0.25; '
           'i=$((i+1)); done' % ON_TTY0, secs=120, bad=NOT_RESPAWN_LOOP)
    m = re.search(r'rescue-init: shell on tty0 died 5 times in (\d+) s; not respawning', vm.buf)
    require(m, 'the init never gave up on tty0')
    require(int(m.group(1)) < 10, 'gave up after %s s, not within 10 s' % m.group(1))
    require(re.search(r'trying again in 60 s, at once on SIGHUP', vm.buf),
            'the init did not say how it retries')
    left = sh.out(ON_TTY0, bad=NOT_RESPAWN_LOOP).split()
    require(not left, 'something runs on tty0 while its shell rests: %s' % left)
    before = len(vm.buf)
    sh.run('kill -HUP 1; sleep 1', bad=NOT_RESPAWN_LOOP)
    require('rescue-init: SIGHUP: trying the shell on tty0 again' in vm.buf[before:],
            'the init did not say it retries on SIGHUP')
    sh.run('sleep 2', bad=NOT_RESPAWN_LOOP)
    require(sh.out(ON_TTY0, bad=NOT_RESPAWN_LOOP).split(), 'no shell on tty0 after SIGHUP')
    poweroff(vm)


@test
def halt(c):
    """`halt` shuts down and halts: the kernel says so, the machine stays on."""
    vm = c.machine(c.cdrom())
    menu(vm, 'rescue')
    boot_rescue(vm)
    vm.type_line('halt')
    vm.wait(r'rescue-init: shutting down: halt', 'the init\'s shutdown message', 60)
    vm.wait(r'reboot: System halted', 'the kernel\'s "System halted"', 60)
    time.sleep(2)
    vm._read(0.5)
    require(vm.exitstatus is None, 'QEMU exited after halt (status %s)' % vm.exitstatus)


@test
def ctrl_alt_del(c):
    """Ctrl-Alt-Del on the keyboard (QEMU sendkey) reboots through init."""
    vm = c.machine(c.cdrom(), monitor=True)
    menu(vm, 'rescue')
    boot_rescue(vm)
    vm.monitor('sendkey ctrl-alt-delete')
    vm.wait(r'rescue-init: shutting down: reboot', 'the init\'s shutdown message', 60)
    vm.wait(r'reboot: Restarting system', 'the kernel restarting', 60)
    status = vm.expect_exit('QEMU to exit after the reboot', 30)
    require(status == 0, 'QEMU exited with status %s' % status)


@test
def boot_options(c):
    """rescue.shell=, rescue.term= and loglevel= typed at the boot: prompt."""
    vm = c.machine(c.cdrom())
    boot_line(vm, 'rescue rescue.shell=/bin/ash rescue.term=xterm-256color '
                'rescue.term=bad/term loglevel=6')
    vm.wait(r"rescue-init: kernel command line: ignoring 'rescue.term=bad/term': "
            r"not a terminal type name", 'the init rejecting rescue.term=bad/term', BOOT_TIMEOUT)
    vm.wait(r'rescue-init: rescue system, [^\n]* shell /bin/ash on ttyS0', 'the banner naming /bin/ash',
            BOOT_TIMEOUT)
    sh = boot_rescue(vm, respawn=True)
    got = sh.out('echo "$SHELL $TERM"; tr "\\0" " " </proc/$$/cmdline; echo').split()
    require(got[:3] == ['/bin/ash', 'xterm-256color', 'ash'],
            'SHELL, TERM and argv[0] are %s, not /bin/ash xterm-256color ash' % got)
    level = sh.out('cat /proc/sys/kernel/printk').split()
    require(level and level[0] == '6', 'console log level is %s: init overrode loglevel=6'
            % level[:1])
    poweroff(vm)


@test
def udhcpc(c):
    """QEMU user networking, nothing typed: eth0 gets an address, a route
    and a resolv.conf by itself; udhcpc typed by hand works too."""
    vm = c.machine(c.cdrom(), extra=['-nic', 'user,model=virtio-net-pci'])
    menu(vm, 'rescue')
    sh = boot_rescue(vm)
    vm.wait(r'rescue-init: net: eth0 is 10\.0\.2\.15/24 via 10\.0\.2\.2, dns 10\.0\.2\.3',
            'eth0 configured by DHCP with nothing typed', 90)
    require('inet 10.0.2.15/24' in sh.out('ip addr show eth0'), 'eth0 has no 10.0.2.15/24')
    require(re.search(r'default via 10\.0\.2\.2', sh.out('ip route')), 'no default route via 10.0.2.2')
    resolv = sh.out('cat /etc/resolv.conf')
    require(re.search(r'^nameserver 10\.0\.2\.3$', resolv, re.M),
            '/etc/resolv.conf has no "nameserver 10.0.2.3": %r' % resolv)
    out = sh.out('udhcpc -i eth0 -n -q', secs=60)
    require(re.search(r'lease of 10\.0\.2\.15 obtained', out), 'udhcpc got no lease: %r' % out[-300:])
    poweroff(vm)


@test
def net_off(c):
    """rescue.net=off: no DHCP client starts, eth0 stays without an
    address until one is typed."""
    vm = c.machine(c.cdrom(), extra=['-nic', 'user,model=virtio-net-pci'])
    boot_line(vm, 'rescue rescue.net=off')
    sh = boot_rescue(vm)
    # Long enough for the automatic lease, which comes within a second or
    # two of the prompt.
    sh.out('sleep 5')
    require('udhcpc' not in sh.out('ps'), 'a udhcpc runs with rescue.net=off')
    require('inet ' not in sh.out('ip -4 addr show eth0'), 'eth0 has an address with rescue.net=off')
    require(not re.search(r'net: eth0 is', vm.buf), 'the console shows a lease on eth0')
    out = sh.out('udhcpc -i eth0 -n -q', secs=60)
    require(re.search(r'lease of 10\.0\.2\.15 obtained', out), 'udhcpc typed got no lease: %r' % out[-300:])
    poweroff(vm)


@test
def stopped_console(c):
    """Ctrl-S on init's console and its buffer full: `poweroff` typed on the
    screen's console still ends QEMU."""
    vm = c.machine(c.cdrom(), monitor=True)
    menu(vm, 'rescue')
    sh = boot_rescue(vm)
    require(re.search(r'(^|\s)ixon', sh.out('stty -a')), 'ttyS0 has no IXON: Ctrl-S would not stop it')
    vm.send('\x13', label='Ctrl-S (stop output on ttyS0, init\'s console)')
    # Its echo waits in the stopped tty; then `yes` fills the buffer and
    # sleeps in write() holding the tty.
    vm.type_line('yes filler-for-the-stopped-console &')
    time.sleep(3)
    vm.type_keys('poweroff\n')
    status = vm.expect_exit('QEMU to exit after poweroff with init\'s console stopped', 90)
    require(status == 0, 'QEMU exited with status %s' % status)
    require('reboot: Power down' in vm.buf, 'no "reboot: Power down" on ttyS0')


@test
def unmount_many(c):
    """100 mounts and an ext4 disk mounted at poweroff: the disk is clean."""
    tree = os.path.join(c.work, 'tree')
    os.makedirs(tree)
    data = c.image('data.img', 64)
    r = host(c, ['mke2fs', '-q', '-F', '-t', 'ext4', '-d', tree, data])
    require(r.returncode == 0, 'mke2fs -d failed on the host')
    vm = c.machine(c.cdrom() + ['-drive', 'if=none,id=d1,format=raw,file=' + data,
                                '-device', 'virtio-blk-pci,drive=d1'])
    menu(vm, 'rescue')
    sh = boot_rescue(vm)
    sh.run('for i in $(seq 100); do mkdir /tmp/m$i && mount -t tmpfs m$i /tmp/m$i || break; done')
    sh.run('mount -t ext4 /dev/vda /mnt && echo still-mounted > /mnt/file')
    n = int(sh.out('wc -l < /proc/self/mountinfo').strip())
    require(n > 100, 'only %d mounts' % n)
    poweroff(vm)
    r = host(c, ['e2fsck', '-fn', data])
    require(r.returncode == 0, 'e2fsck -fn of the disk is not clean (status %d)' % r.returncode)
    r = host(c, ['dumpe2fs', '-h', data])
    require('needs_recovery' not in r.stdout, 'the ext4 journal needs recovery: it was never unmounted')
    r = host(c, ['debugfs', '-R', 'cat /file', data])
    require('still-mounted' in r.stdout, 'the file written before poweroff is not on the disk')


# ---------------------------------------------------------------------------
# The banner's stack lines (issue 9): LUKS made by cryptsetup on the host,
# md and LVM headers written by tests/ondisk.py and read back by the host's
# own tools first.

def luks_image(c, path, mib, version):
    c.image(os.path.basename(path), mib)
    r = subprocess.run(['cryptsetup', 'luksFormat', '--batch-mode', '--type', 'luks%d' % version,
                        '--pbkdf', 'pbkdf2', '--pbkdf-force-iterations', '1000',
                        '--key-file', '-', path], input=b'rescue', capture_output=True)
    c.log.write('\n[boottest] cryptsetup luksFormat --type luks%d %s: %d %s\n'
                % (version, path, r.returncode, r.stderr.decode(errors='replace')))
    require(r.returncode == 0, 'cryptsetup luksFormat failed on the host')


def put(path, offset, data):
    with open(path, 'r+b') as f:
        f.seek(offset)
        f.write(data)


def host_type(c, path, offset=0, size=None):
    """What the host's blkid sees at offset (within size bytes)."""
    args = ['blkid', '-p', '-o', 'value', '-s', 'TYPE', '-O', str(offset)]
    if size:
        args += ['-S', str(size)]
    return host(c, args + [path]).stdout.strip()


@test
def banner_stacks(c):
    """The banner names LUKS, md and LVM stacks, read-only, and does not wait
    long for a disk that does not answer."""
    mib = 1 << 20
    u = uuid.UUID('5e5c0e00-0000-4000-8000-000000000009').bytes
    vda = os.path.join(c.work, 'luks2.img')
    luks_image(c, vda, 32, 2)
    # vdb: three MBR partitions, LUKS1, an LVM PV and a 0.90 md member
    # that ends where the disk ends (so the disk's own end looks like md).
    vdb = c.image('parts.img', 64)
    r = subprocess.run(['sfdisk', '-q', vdb], input=b'label: dos\n2048,32768\n34816,32768\n67584,\n',
                       capture_output=True)
    require(r.returncode == 0, 'sfdisk failed on the host: %s' % r.stderr.decode(errors='replace'))
    p1 = os.path.join(c.work, 'luks1.img')
    luks_image(c, p1, 16, 1)
    with open(p1, 'rb') as f:
        put(vdb, 2048 * 512, f.read())
    put(vdb, 34816 * 512, ondisk.lvm_pv(16 * mib, 'vg0'))
    p3_size = (131072 - 67584) * 512
    put(vdb, 67584 * 512 + ondisk.md090_offset(p3_size), ondisk.md090_superblock(p3_size, 5, u, 0))
    vdc = c.image('md12.img', 16)
    put(vdc, 4096, ondisk.md1_superblock(4096, 16 * mib, 'otherhost:0', u, 0))
    vdd = c.image('md10.img', 16)
    at = ondisk.md1_offset('1.0', 16 * mib)
    put(vdd, at, ondisk.md1_superblock(at, 16 * mib, 'data', u, 1))
    slow = c.image('slow.img', 8)
    for path, off, size, want in ((vda, 0, None, 'crypto_LUKS'),
                                  (vdb, 2048 * 512, 16 * mib, 'crypto_LUKS'),
                                  (vdb, 34816 * 512, 16 * mib, 'LVM2_member'),
                                  (vdb, 67584 * 512, p3_size, 'linux_raid_member'),
                                  (vdc, 0, None, 'linux_raid_member'),
                                  (vdd, 0, None, 'linux_raid_member')):
        got = host_type(c, path, off, size)
        require(got == want, 'the host\'s blkid sees %r at %s+%d, not %s' % (got, path, off, want))
    sums = {p: sha256(p) for p in (vda, vdb, vdc, vdd)}
    disks = []
    for i, path in enumerate((vda, vdb, vdc, vdd)):
        disks += ['-drive', 'if=none,id=d%d,format=raw,file=%s' % (i, path),
                  '-device', 'virtio-blk-pci,drive=d%d' % i]
    # vde reads at 512 bytes/s: the probe's reads take minutes.
    disks += ['-drive', 'if=none,id=slow,format=raw,file=%s,throttling.bps-read=512' % slow,
              '-device', 'virtio-blk-pci,drive=slow']
    vm = c.machine(c.cdrom() + disks)
    menu(vm, 'rescue')
    want = [r'vda: LUKS2 \(cryptsetup open /dev/vda NAME\)',
            r'vdb1: LUKS1 \(cryptsetup open /dev/vdb1 NAME\)',
            r'vdb2: LVM PV of vg0 \(vgchange -ay vg0\)',
            r'vdb3: md member of md5 \(mdadm --assemble --scan\)',
            r'vdc: md member of md0 \(mdadm --assemble --scan\)',
            r'vdd: md member of md/data \(mdadm --assemble --scan\)']
    for w in want:
        vm.wait(r'rescue-init: ' + w, 'the banner line "%s"' % w.replace('\\', ''), BOOT_TIMEOUT)
    t0 = time.monotonic()
    vm.wait(r'rescue-init: vde did not answer within 5 s', 'the banner giving up on vde', 60)
    sh = boot_rescue(vm, respawn=True)
    c.log.write('\n[boottest] prompt %.1f s after the last stack line\n' % (time.monotonic() - t0))
    stacks = re.findall(r'rescue-init: (\S+): (?:LUKS|md member|LVM PV)', vm.buf)
    require(sorted(stacks) == ['vda', 'vdb1', 'vdb2', 'vdb3', 'vdc', 'vdd'],
            'stack lines for %s' % stacks)
    blocks = sh.out('ls /sys/block').split()
    require(not [b for b in blocks if b.startswith(('dm-', 'md'))],
            'something was activated: %s' % blocks)
    # The reader still waits on vde; it must not hold the shutdown up.
    t0 = time.monotonic()
    poweroff(vm)
    took = time.monotonic() - t0
    c.log.write('\n[boottest] poweroff took %.1f s\n' % took)
    require(took < 30, 'poweroff took %.0f s with a read pending on vde' % took)
    for p, digest in sums.items():
        require(sha256(p) == digest, '%s changed: the banner wrote to a disk' % os.path.basename(p))

# ---------------------------------------------------------------------------



if __name__ == '__main__':
    sys.exit(main(__doc__))
