#!/usr/bin/python3
"""Booting an installed system with the rescue kernel: the real Debian 12
of the enter suite (tests/enter.py's fixture, imported, stage 1: the disk
as mmdebstrap and mke2fs made it, no boot loader needed), its own systemd
and udev on top of the devtmpfs the kernel mounted.

Each Debian boot under TCG takes minutes: the tests boot few times and
check much in each.  The time from the chosen entry to Debian's login
prompt is written to the log ("booted to login in N s").

installed_kernel_root and installed_initramfs start a kernel with QEMU's
-kernel: the ISO's (build/kernel), or with --kernel another one, which
`make check-control` does with kernels from the unpatched tree (issue
14's control).  What they expect of /dev follows that kernel's .config
(beside its bzImage in the kbuild output directory).

    tests/boot_installed.py --iso build/rescue.iso --logdir build/test-logs [TEST...]
    tests/boot_installed.py --kernel build/kernel-unpatched/arch/x86/boot/bzImage \
        installed_kernel_root installed_initramfs
"""

import os
import re
import subprocess
import sys
import time

import enter
import qemu
from enter import DEBIAN_BAD, MEM, Disk, hd
from qemu import boot_line, boot_rescue, main, menu, require, test

DEBIAN_BOOT_TIMEOUT = 300  # entry -> login prompt under TCG (x TIMEOUT_FACTOR)
# The rescue shell where Debian's login should be: the hand-over failed.
HANDOVER_BAD = DEBIAN_BAD + [
    ('back at the rescue shell', r'rescue-boot: back to the rescue shell'),
    # systemd on a kernel without what configs/50-systemd.config adds.
    ('systemd froze', r'Failed to mount API filesystems[^\n]*|Freezing execution[^\n]*'),
    # The kernel starts init with no /dev/console (no devtmpfs on /dev).
    ('no console', r'Warning: unable to open an initial console[^\n]*'),
]


# Debian's initramfs that found no root device (its shell prompt may not
# come: without a console it is never printed).
INITRAMFS_BAD = [('the initramfs gave up', r'ALERT! [^\n]* does not exist\.\s+Dropping to a shell!')]


def installed_disk(c):
    """A private copy of the Debian 12 disk (sda1 ext4 /, sda5 swap)."""
    f = enter.Fixture('bios', c.iso)
    src = f.ensure_unbooted(c)
    disk = Disk(os.path.join(c.work, 'disk.img'))
    subprocess.run(['cp', '--sparse=always', os.path.join(src, 'disk.img'), disk.path],
                   check=True)
    return f, disk, enter.read_layout(os.path.join(src, 'layout'))


def login(vm, started, password, bad=HANDOVER_BAD):
    """Debian's login prompt on the serial console: log in as root."""
    return enter.login_as_root(vm, password, DEBIAN_BOOT_TIMEOUT, bad, started)


def udev_took_over(sh, layout):
    """Sievers' claim, checked the way a person would: udevd runs on the
    /dev it found, nothing failed, and udev's links are there."""
    out = sh.out('systemctl is-active systemd-udevd', ok=False).strip()
    require(out == 'active', 'systemd-udevd is not active: %s' % out)
    failed = sh.out('systemctl --failed --no-legend --plain | cat', ok=False).strip()
    require(failed == '', 'failed units: %s' % failed)
    out = sh.out('ls /dev/disk/by-uuid')
    require(layout['ROOT_UUID'] in out, 'udev made no /dev/disk/by-uuid link '
            'for the root: %s' % out.strip())
    sh.run('systemctl status systemd-udevd --no-pager | head -5 | cat', ok=False)


def clean_poweroff(c, vm, sh, disk, layout):
    vm.type_line('systemctl poweroff')
    status = vm.expect_exit('Debian to power off', 180, bad=qemu.BAD)
    require(status == 0, 'QEMU exited with status %s after poweroff' % status)
    enter.fsck_clean(c, disk, layout)


def kernel_devtmpfs(sh, by_kernel=True):
    """/dev is one devtmpfs mount named "devtmpfs" (udev's initramfs names
    its own "udev"), not mounted again on top; by_kernel: the kernel
    mounted it (otherwise systemd did: the kernel log does not say so)."""
    out = sh.out('findmnt -n -o FSTYPE,SOURCE /dev').split()
    require(out == ['devtmpfs', 'devtmpfs'], 'findmnt /dev: %s' % out)
    n = sh.out("awk '$5 == \"/dev\"' /proc/self/mountinfo | wc -l").strip()
    require(n == '1', '%s mounts on /dev' % n)
    # (-c: the console reader drops kernel-log lines from answers)
    out = sh.out('dmesg | grep -c "devtmpfs: mounted"', ok=False).strip()
    require(out == ('1' if by_kernel else '0'), 'the kernel log says %s times that it '
            'mounted devtmpfs, want %d' % (out, by_kernel))


def test_kernel(c):
    """The kernel that -kernel boots (--kernel, or the ISO's) and the
    symbols of its .config."""
    default = os.path.join(os.path.dirname(c.iso), 'kernel-products', 'arch', 'x86', 'boot', 'bzImage')
    kernel = os.path.abspath(qemu.OPTIONS.kernel or default)
    require(os.path.isfile(kernel), 'no kernel at %s' % kernel)
    dotconfig = os.path.join(os.path.dirname(kernel), '..', '..', '..', '.config')
    require(os.path.isfile(dotconfig), 'no .config beside %s (want its kbuild output '
            'directory)' % kernel)
    config = {}
    with open(dotconfig) as f:
        for line in f:
            m = re.match(r'(CONFIG_\w+)=(.*)', line)
            if m:
                config[m.group(1)] = m.group(2)
    c.log.write('[boot-installed] kernel %s: %s\n' % (kernel, ' '.join(
        '%s=%s' % (k, config.get(k, 'n')) for k in ('CONFIG_DEVTMPFS', 'CONFIG_DEVTMPFS_MOUNT'))))
    return kernel, config


def delete_initrd(c, disk, layout):
    """Delete the fixture's /boot/initrd.img-* on the host."""
    listing = enter.debugfs(c, disk, layout, ['ls /boot'])
    initrd = re.search(r'initrd\.img-[^\s]+', listing)
    require(initrd, 'no initrd in the fixture\'s /boot: ' + listing)
    enter.debugfs(c, disk, layout, ['rm /boot/' + initrd.group(0)])


def booted_without_initramfs(c, vm, disk, layout, started, devtmpfs_by_kernel=True):
    """Debian (initramfs deleted) boots on the rescue kernel to login: its
    systemd and udev run on the /dev they found, the root is read-write
    with its fstab options, and it powers off clean."""
    sh = login(vm, started, layout['ROOT_PASSWORD'])
    out = sh.out('uname -r; cat /proc/1/comm; ls /boot')
    require(re.search(r'-rescue\n', out), 'not the rescue kernel: %s' % out)
    require('systemd\n' in out, 'PID 1 is not systemd: %s' % out)
    require('initrd.img' not in out, 'the initramfs is back: %s' % out)
    kernel_devtmpfs(sh, devtmpfs_by_kernel)
    udev_took_over(sh, layout)
    out = sh.out('findmnt -n -o OPTIONS /').strip()
    require(out.startswith('rw') and 'errors=remount-ro' in out,
            'the root is not read-write with its fstab options: %s' % out)
    clean_poweroff(c, vm, sh, disk, layout)


@test
def installed_menu(c):
    """Menu entry "Boot installed Linux": Debian 12 with its initramfs
    deleted boots to login on the rescue kernel; udev took over /dev."""
    f, disk, layout = installed_disk(c)
    delete_initrd(c, disk, layout)
    vm = c.machine(c.cdrom() + hd(disk, 1), mem=MEM)
    menu(vm, 'installed')
    started = time.monotonic()
    vm.wait(r'rescue-init: /dev is devtmpfs, mounted by the kernel',
            'rescue-init to find the kernel\'s devtmpfs', qemu.BOOT_TIMEOUT)
    vm.wait(r'rescue-boot: mounted /dev/sda1 \(ext4\) read-only, with its fstab '
            r'options for /: errors=remount-ro', 'the root mounted', 120,
            bad=HANDOVER_BAD)
    vm.wait(r'rescue-boot: starting Debian GNU/Linux 12 \(bookworm\) on /dev/sda1',
            'the hand-over to /sbin/init', 60, bad=HANDOVER_BAD)
    booted_without_initramfs(c, vm, disk, layout, started)


@test
def installed_kernel_root(c):
    """The kernel alone (-kernel, root=/dev/sda1, no initramfs, no
    rescue-init): Debian 12 with its initramfs deleted boots to login; udev
    took over the /dev it found."""
    kernel, config = test_kernel(c)
    f, disk, layout = installed_disk(c)
    delete_initrd(c, disk, layout)
    vm = c.machine(hd(disk, 1), mem=MEM, extra=[
        '-kernel', kernel, '-append', 'root=/dev/sda1 ro rootwait console=ttyS0,115200'])
    started = time.monotonic()
    vm.wait(r'Welcome to Debian GNU/Linux 12', 'systemd to start on the root',
            qemu.BOOT_TIMEOUT, bad=HANDOVER_BAD)
    # Without DEVTMPFS_MOUNT the kernel leaves /dev to systemd, which
    # mounts a devtmpfs there itself.
    booted_without_initramfs(c, vm, disk, layout, started,
                             devtmpfs_by_kernel=config.get('CONFIG_DEVTMPFS_MOUNT') == 'y')


@test
def installed_initramfs(c):
    """Our kernel with the installed system's own initramfs (extracted
    from its /boot) and root=: devtmpfs is invisible; it boots to login."""
    kernel, config = test_kernel(c)
    f, disk, layout = installed_disk(c)
    listing = enter.debugfs(c, disk, layout, ['ls /boot'])
    initrd = re.search(r'initrd\.img-[^\s]+', listing)
    require(initrd, 'no initrd in the fixture\'s /boot: ' + listing)
    initrd_path = os.path.join(c.work, initrd.group(0))
    enter.debugfs(c, disk, layout, ['dump /boot/%s %s' % (initrd.group(0), initrd_path)])
    vm = c.machine(hd(disk, 1), mem=MEM, extra=[   # -kernel takes bootindex 0
        '-kernel', kernel, '-initrd', initrd_path,
        '-append', 'root=UUID=%s ro console=ttyS0,115200' % layout['ROOT_UUID']])
    started = time.monotonic()
    vm.wait(r'Loading, please wait', 'Debian\'s initramfs to start', 120, bad=DEBIAN_BAD)
    sh = login(vm, started, layout['ROOT_PASSWORD'], HANDOVER_BAD + INITRAMFS_BAD)
    out = sh.out('uname -r')
    require(out.strip().endswith('-rescue'), 'not the rescue kernel: %s' % out)
    # The kernel never mounted its devtmpfs: the initramfs mounted one
    # ("udev") and moved it to the root.
    out = sh.out('findmnt -n -o FSTYPE,SOURCE /dev').split()
    require(out == ['devtmpfs', 'udev'], 'findmnt /dev: %s' % out)
    out = sh.out('dmesg | grep -c "devtmpfs: initialized"; '
                 'dmesg | grep -c "devtmpfs: mounted"', ok=False).split()
    want = ['1' if config.get('CONFIG_DEVTMPFS') == 'y' else '0', '0']
    require(out == want, 'devtmpfs initialized, mounted: %s (want %s: the kernel log '
            'holds its start if it has devtmpfs, and the kernel did not mount it)'
            % (out, ' '.join(want)))
    udev_took_over(sh, layout)
    clean_poweroff(c, vm, sh, disk, layout)


def root_without_init(c):
    """A tiny installed root with the API directories but no /sbin/init."""
    return enter.tiny_root(c, 'noinit', 'Broken Linux 1 (no init)',
                           dirs=('dev', 'proc', 'sys', 'run', 'sbin'))


def virtio(disk, name):
    return ['-drive', 'if=none,id=%s,format=raw,file=%s' % (name, disk.path),
            '-device', 'virtio-blk-pci,drive=%s' % name]


@test
def installed_failures(c):
    """rescue.boot=/dev/vdz, several roots, and a root without /sbin/init
    (asked for from the shell with rescue-boot): each ends at the rescue
    shell with its reason, and PID 1 never dies."""
    noinit = root_without_init(c)
    other = enter.other_root(c)
    vm = c.machine(c.cdrom() + virtio(noinit, 'noinit') + virtio(other, 'other'))
    boot_line(vm, 'installed rescue.boot=/dev/vdz')
    vm.wait(r'rescue-boot: /dev/vdz: no such device', 'the missing device named', 120)
    vm.wait(r'rescue-boot: back to the rescue shell', 'the way back', 30)
    sh = boot_rescue(vm)
    require(sh.out('cat /proc/1/comm').strip() == 'init', 'PID 1 is not rescue-init')

    st, out = sh.run('rescue-boot', ok=False)
    require(st == 1, 'rescue-boot with two roots: status %d' % st)
    for want in (r'2 installed Linux roots found; choose one with rescue.boot=DEVICE',
                 r'/dev/vda +ext4 +Broken Linux 1 \(no init\) +rescue.boot=/dev/vda',
                 r'/dev/vdb +ext4 +Other Linux 1 \(test\) +rescue.boot=/dev/vdb'):
        require(re.search(want, out), 'rescue-boot lacks /%s/: %s' % (want, out))

    st, out = sh.run('echo n | rescue-boot vda', ok=False)
    require(st == 1 and 'nothing done' in out, 'a "n" answer went on: %s' % out)

    vm.type_line('rescue-boot vda')
    vm.wait(r'Boot Broken Linux 1 \(no init\) on /dev/vda with the rescue kernel\? '
            r'Every rescue shell is stopped\. \[y/N\] ', 'the question', 60)
    vm.type_line('y')
    vm.wait(r'rescue-init: rescue-boot /dev/vda', 'PID 1 to take the request', 60)
    vm.wait(r'rescue-boot: Broken Linux 1 \(no init\) on /dev/vda has no /sbin/init '
            r'to start \(No such file or directory\)', 'the missing init named', 120)
    vm.wait(r'rescue-boot: back to the rescue shell', 'the way back', 30)
    sh = boot_rescue(vm)
    out = sh.out('cat /proc/1/comm; awk \'$2 == "/dev" {print $3}\' /proc/mounts; '
                 'grep -c vda /proc/mounts',
                 ok=False)
    require(out.split() == ['init', 'devtmpfs', '0'],
            'after the failed hand-over: %s' % out)
    qemu.poweroff(vm)


# ---------------------------------------------------------------------------
# A root on LVM on LUKS, made inside QEMU (the host has no device-mapper):
# the activation, a passphrase given up, and the failure path, in minutes.

TINY_PASS = 'tiny-lvm-secret'
TINY_NAME = r'Tiny Linux 1 \(LVM on LUKS\)'
TINY_LV = '/dev/mapper/tinyvg-root'
# Its /sbin/init, added in boot 2: proves it is PID 1 on the LV, then
# powers off (busybox on the ISO is static).
TINY_INIT = (r'#!/bin/busybox sh\n'
             r'while read dev mnt rest; do [ "$mnt" = / ] && '
             r'echo "tiny init: PID $$, / is $dev"; done </proc/mounts\n'
             r'/bin/busybox poweroff -f\n')


def make_tiny_lvm_root(sh):
    """vda: LUKS2 (its default cipher, a quick PBKDF) -> VG tinyvg -> LV
    root, ext4, a tiny installed root with the API directories and a
    static busybox but no /sbin/init yet.  Left closed."""
    for cmd in (
            'printf %%s %s >/tmp/key' % TINY_PASS,
            'cryptsetup luksFormat --batch-mode --type luks2 --pbkdf pbkdf2 '
            '--pbkdf-force-iterations 1000 --key-file /tmp/key /dev/vda',
            'cryptsetup open --key-file /tmp/key /dev/vda made_crypt',
            'pvcreate -q /dev/mapper/made_crypt && vgcreate -q tinyvg /dev/mapper/made_crypt',
            'lvcreate -q -y -L 16M -n root tinyvg',
            'mkfs.ext4 -q -L tiny /dev/tinyvg/root',
            'mount /dev/tinyvg/root /mnt && mkdir /mnt/etc /mnt/dev /mnt/proc /mnt/sys '
            '/mnt/run /mnt/bin /mnt/sbin && cp /bin/busybox /mnt/bin/',
            'printf \'PRETTY_NAME="Tiny Linux 1 (LVM on LUKS)"\\nID=tiny\\nVERSION_ID=1\\n\' '
            '>/mnt/etc/os-release',
            'echo "%s / ext4 errors=remount-ro 0 1" >/mnt/etc/fstab' % TINY_LV,
            'umount /mnt && vgchange -an tinyvg && cryptsetup close made_crypt && rm /tmp/key'):
        sh.run(cmd, secs=120)


def passphrase(vm, words):
    """Type each of `words` at cryptsetup's prompt on the console; None is
    Ctrl-C."""
    for word in words:
        vm.wait(r'Enter passphrase for /dev/vda: ', "cryptsetup's prompt", 120,
                bad=HANDOVER_BAD[:-2])
        if word is None:
            vm.send('\x03', label='Ctrl-C')
        else:
            vm.type_line(word)
        if word and word != TINY_PASS:
            vm.wait(r'No key available with this passphrase', 'the wrong one refused', 120)


@test
def installed_lvm_luks(c):
    """A root on LVM on LUKS: rescue.boot=auto asks for the passphrase and,
    given up, ends at the rescue shell naming what stays closed; rescue-boot
    in the shell says how to open it, and once opened boots it (no /sbin/init:
    back with the reason); rescue.boot=/dev/VG/LV asks, activates the VG and
    boots the LV's own init."""
    disk = Disk(c.image('tiny-lvm.img', 64))
    closed = [r'rescue-boot: closed devices; open them, then run rescue-boot again:',
              r'/dev/vda +crypto_LUKS +cryptsetup open /dev/vda vda_crypt']

    # Boot 1: make it at the rescue shell; everything closed, rescue-boot
    # says what to open.
    vm = c.machine(c.cdrom() + virtio(disk, 'tiny'))
    menu(vm, 'rescue')
    sh = boot_rescue(vm)
    make_tiny_lvm_root(sh)
    st, out = sh.run('rescue-boot', ok=False)
    require(st == 1, 'rescue-boot with the root closed: status %d' % st)
    for want in [r'rescue-boot: no installed Linux root found'] + closed:
        require(re.search(want, out), 'rescue-boot lacks /%s/: %s' % (want, out))
    qemu.poweroff(vm)

    # Boot 2: rescue.boot=auto; a wrong passphrase, then Ctrl-C gives up.
    vm = c.machine(c.cdrom() + virtio(disk, 'tiny'))
    boot_line(vm, 'installed rescue.boot=auto')
    vm.wait(r'rescue-boot: /dev/vda is encrypted \(LUKS\); its passphrase opens it as '
            r'/dev/mapper/vda_crypt \(Ctrl-C gives up\)', 'the device named', 120,
            bad=HANDOVER_BAD[:-2])
    passphrase(vm, ['wrong-1', None])
    vm.wait(r'rescue-boot: cryptsetup open /dev/vda vda_crypt failed \(status \d+\); it '
            r'stays closed', 'giving up reported', 60)
    for want in [r'rescue-boot: no installed Linux root found'] + closed:
        vm.wait(want, 'the reason', 60)
    vm.wait(r'rescue-boot: back to the rescue shell', 'the way back', 30)
    sh = boot_rescue(vm)
    require(sh.out('cat /proc/1/comm').strip() == 'init', 'PID 1 is not rescue-init')
    # Opened by hand, the LV root is found and asked for from the shell;
    # PID 1 opens nothing more (it is open) and finds no /sbin/init.
    sh.run('printf %%s %s | cryptsetup open --key-file - /dev/vda vda_crypt && '
           'vgchange -ay tinyvg' % TINY_PASS, secs=120)
    vm.type_line('rescue-boot')
    vm.wait(r'Boot %s on %s with the rescue kernel\? ' % (TINY_NAME, TINY_LV),
            'the question', 60)
    vm.type_line('y')
    handed = vm.pos
    vm.wait(r'rescue-init: rescue-boot %s' % TINY_LV, 'PID 1 to take the request', 60)
    vm.wait(r'rescue-boot: %s on %s has no /sbin/init to start \(No such file or '
            r'directory\)' % (TINY_NAME, TINY_LV), 'the missing init named', 120)
    vm.wait(r'rescue-boot: back to the rescue shell', 'the way back', 30)
    require(not re.search(r'encrypted|activating', vm.buf[handed:]),
            'rescue-boot opened something with the root open already')
    sh = boot_rescue(vm)
    out = sh.out('cat /proc/1/comm; grep -c tinyvg /proc/mounts', ok=False)
    require(out.split() == ['init', '0'], 'after the failed hand-over: %s' % out)
    sh.run('mount %s /mnt && printf \'%s\' >/mnt/sbin/init && chmod 755 /mnt/sbin/init && '
           'umount /mnt && vgchange -an tinyvg && cryptsetup close vda_crypt'
           % (TINY_LV, TINY_INIT), secs=120)
    qemu.poweroff(vm)

    # Boot 3: the LV by a name that exists only once it is active; one
    # wrong passphrase, then the right one: its own init runs as PID 1.
    vm = c.machine(c.cdrom() + virtio(disk, 'tiny'))
    boot_line(vm, 'installed rescue.boot=/dev/tinyvg/root')
    passphrase(vm, ['wrong', TINY_PASS])
    vm.wait(r'rescue-boot: activating LVM volume groups: /sbin/vgchange -ay',
            'the VG activated', 120, bad=HANDOVER_BAD)
    vm.wait(r'rescue-boot: mounted %s \(ext4\) read-only, with its fstab options for /: '
            r'errors=remount-ro' % TINY_LV, 'the LV mounted', 120, bad=HANDOVER_BAD)
    vm.wait(r'rescue-boot: starting %s on %s: /sbin/init' % (TINY_NAME, TINY_LV),
            'the hand-over', 60, bad=HANDOVER_BAD)
    vm.wait(r'tiny init: PID 1, / is %s' % TINY_LV, 'the LV\'s own init', 60,
            bad=HANDOVER_BAD)
    vm.wait(r'reboot: Power down', 'the tiny init to power off', 60)
    status = vm.expect_exit('QEMU to exit after the tiny init', 30)
    require(status == 0, 'QEMU exited with status %s' % status)
    require(TINY_PASS not in vm.buf, 'the passphrase was echoed on the console')


@test
def installed_crypt(c):
    """Test 5: Debian 12 on LUKS2 -> LVM (the enter suite's crypt fixture,
    whose initramfs cannot open it) boots through the menu entry: the
    passphrase typed at the console, the VG activated, Debian's login on
    the LV, its own systemd-cryptsetup and LVM content with what they find."""
    f = enter.fixture(c, 'crypt')
    L = f.layout
    disk = f.copy(c)
    dev, name, lv = L['LUKS_DEVICE'], L['LUKS_NAME'], L['ROOT_LV']
    vm = c.machine(c.cdrom() + hd(disk, 1), mem=MEM)
    menu(vm, 'installed')
    started = time.monotonic()
    vm.wait(r'rescue-boot: %s is encrypted \(LUKS\); its passphrase opens it as '
            r'/dev/mapper/%s' % (dev, name), 'the device named', qemu.BOOT_TIMEOUT,
            bad=HANDOVER_BAD)
    vm.wait(r'Enter passphrase for %s: ' % dev, "cryptsetup's prompt", 120, bad=HANDOVER_BAD)
    vm.send(L['LUKS_PASSPHRASE'] + '\r', label='(the passphrase)')
    vm.wait(r'rescue-boot: activating LVM volume groups: /sbin/vgchange -ay',
            'the VG activated', 300, bad=HANDOVER_BAD)
    vm.wait(r'rescue-boot: mounted %s \(ext4\) read-only, with its fstab options for /: '
            r'errors=remount-ro' % re.escape(lv), 'the LV mounted', 120, bad=HANDOVER_BAD)
    vm.wait(r'rescue-boot: starting Debian GNU/Linux 12 \(bookworm\) on %s' % re.escape(lv),
            'the hand-over to /sbin/init', 60, bad=HANDOVER_BAD)
    sh = login(vm, started, L['ROOT_PASSWORD'])
    require(L['LUKS_PASSPHRASE'] not in vm.buf, 'the passphrase was echoed on the console')
    out = sh.out('uname -r; findmnt -n -o SOURCE,FSTYPE /')
    require(re.search(r'-rescue\n', out), 'not the rescue kernel: %s' % out)
    require(re.search(r'^%s +ext4$' % re.escape(lv), out, re.M), 'the root is not the LV: %s' % out)
    # The mapping rescue-boot opened is the one crypttab names: the
    # target's systemd-cryptsetup found it active and did not fail.
    out = sh.out('systemctl is-active systemd-cryptsetup@%s; cryptsetup status %s | head -3'
                 % (name, name), ok=False)
    require(out.split()[:1] == ['active'] and 'is active and is in use' in out,
            'the LUKS mapping as the target sees it: %s' % out)
    udev_took_over(sh, L)
    # The swap LV, which systemd waits for as udev announces it.
    out = sh.out('swapon --show=NAME --noheadings', ok=False).strip()
    require(out, 'no swap active: the swap LV never became ready')
    clean_poweroff(c, vm, sh, disk, L)


def options(p):
    p.add_argument('--kernel', help='the bzImage for installed_kernel_root and '
                   'installed_initramfs, in its kbuild output directory '
                   '(default: the ISO\'s, ISO_DIR/kernel-products/arch/x86/boot/bzImage)')


if __name__ == '__main__':
    sys.exit(main(__doc__, options))
