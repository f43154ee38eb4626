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
    default = os.path.join(os.path.dirname(c.iso), 'kernel', 'arch', 'x86', 'boot', 'bzImage')
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


def options(p):
    p.add_argument('--kernel', help='the bzImage for installed_kernel_root and '
                   'installed_initramfs, in its kbuild output directory '
                   '(default: the ISO\'s, ISO_DIR/kernel/arch/x86/boot/bzImage)')


if __name__ == '__main__':
    sys.exit(main(__doc__, options))
