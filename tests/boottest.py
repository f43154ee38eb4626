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

from qemu import (BOOT_TIMEOUT, MENU, PROMPT, Fail, bare_shell, boot_line,
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


# ---------------------------------------------------------------------------



if __name__ == '__main__':
    sys.exit(main(__doc__))
