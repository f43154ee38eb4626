#!/usr/bin/python3
"""Root medium tests: the kernel mounts the medium it was booted from.

The ISO's kernel command line names candidates (root=PARTUUID=<diskid>-01,
/dev/sr0) and the file only this build carries (rootmarker=/boot/grub/
rescue-<diskid>.id, patches/0002).  Each test boots the ISO next to other
media that could be taken for its root -- an ISO 9660 data disc in the CD
drive, a stick holding an older build of this ISO -- and checks at the
shell which device / is on and that it holds this build's marker.  The
older builds are made here, by image/build-iso.sh with the same kernel and
programs and another SOURCE_DATE_EPOCH (make exports the ISO's inputs as
BUILD_ISO).

    make check-media [TESTS='bios_stick_datadisc ...'] [TIMEOUT_FACTOR=3]
    tests/media.py --list
"""

import os
import re
import sys

from qemu import (BOOT_TIMEOUT, boot_line, boot_rescue, build_another_iso, host, main,
                  menu, require, root_device, test)

MARKER = '/boot/grub/rescue-%s.id'
# patches/0002's line for a candidate that mounted but is not our root.
REFUSED = r'VFS: root candidate %s \(\d+:\d+\) lacks %s: not this system\'s root, unmounted'


def disk_id(path):
    """The MBR disk signature of an image, as build-iso.sh's DISKID."""
    with open(path, 'rb') as f:
        f.seek(440)
        return '%08x' % int.from_bytes(f.read(4), 'little')


def older_build(c, days=1):
    """This ISO built again with SOURCE_DATE_EPOCH `days` earlier: another
    disk id, another marker, the same kernel and programs."""
    require('SOURCE_DATE_EPOCH' in os.environ,
            'SOURCE_DATE_EPOCH is not set: run this suite with make check-media')
    epoch = int(os.environ['SOURCE_DATE_EPOCH']) - days * 86400
    iso = build_another_iso(c, 'older-%d' % epoch, SOURCE_DATE_EPOCH=str(epoch), V='')
    require(disk_id(iso) != disk_id(c.iso), 'the older build has the same disk id %s'
            % disk_id(iso))
    return iso


def data_disc(c):
    """An ISO 9660 data disc with nothing of ours on it."""
    tree = os.path.join(c.work, 'data')
    os.makedirs(tree)
    with open(os.path.join(tree, 'README.TXT'), 'w') as f:
        f.write('a data disc left in the drive\n')
    iso = os.path.join(c.work, 'data.iso')
    r = host(c, ['xorriso', '-as', 'mkisofs', '-quiet', '-R', '-V', 'DATADISC',
                 '-o', iso, tree])
    require(r.returncode == 0, 'xorriso could not make the data disc')
    return iso


def disk_ids(sh):
    """{disk name: MBR signature} of every sdX the guest has."""
    out = sh.out('for d in /sys/block/sd*; do d=${d##*/}; '
                 'echo "$d $(dd if=/dev/$d bs=1 skip=440 count=4 2>/dev/null | od -An -tx4)"; done')
    return dict(re.findall(r'^(sd[a-z]+) +([0-9a-f]{8})\s*$', out, re.M))


def has_disk(sh, diskid, secs=30):
    """Whether a disk with MBR signature `diskid` comes within `secs`: a
    stick that is not the root is scanned on its own time (usb-storage
    waits 1 s after it finds one), which can be after the prompt."""
    for _ in range(secs):
        if diskid in disk_ids(sh).values():
            return True
        sh.run('sleep 1')
    return False


def check_root(sh, on, diskid):
    """/ is iso9660 on `on` ('cd': sr0; 'stick': partition 1 of the disk
    whose signature is `diskid`) and holds this build's marker."""
    num, name = root_device(sh)
    if on == 'cd':
        require(name == 'sr0', 'root filesystem is on %s (%s), not sr0' % (name, num))
    else:
        m = re.match(r'(sd[a-z]+)1$', name or '')
        require(m, 'root filesystem is on %s (%s), not a stick\'s partition 1' % (name, num))
        ids = disk_ids(sh)
        require(ids.get(m.group(1)) == diskid, 'root is on %s, whose disk id is %s, not %s '
                '(disks: %s)' % (name, ids.get(m.group(1)), diskid, ids))
    require(re.search(r' on / type iso9660', sh.out('mount')), '`mount` shows no iso9660 on /')
    marker = MARKER % diskid
    listing = sh.out('ls /boot/grub/').split()
    require(os.path.basename(marker) in listing, 'the root has no %s (/boot/grub: %s)'
            % (marker, ' '.join(listing)))
    cmdline = sh.out('cat /proc/cmdline')
    require('rootmarker=%s ' % marker in cmdline + ' ',
            'the kernel was not booted with rootmarker=%s: %r' % (marker, cmdline.strip()))


def stick_and_data_disc(c, uefi):
    diskid = disk_id(c.iso)
    # The drive comes second in the boot order, as a DVD drive does on a
    # laptop; the stick is booted.
    vm = c.machine(c.usb_stick() + c.cdrom(data_disc(c), bootindex=1), uefi=uefi)
    menu(vm, 'rescue', uefi=uefi)
    sh = boot_rescue(vm)
    check_root(sh, 'stick', diskid)
    # The disc is there before usb-storage has settled: the kernel must
    # have mounted it, found no marker and let it go.
    require(re.search(REFUSED % ('/dev/sr0', re.escape(MARKER % diskid)), vm.buf),
            'no "root candidate /dev/sr0 ... lacks %s" line: the data disc was never '
            'tried, so this boot did not test it' % (MARKER % diskid))


@test
def bios_stick_datadisc(c):
    """BIOS, USB stick + a data disc in the CD drive: root is the stick."""
    stick_and_data_disc(c, uefi=False)


@test
def uefi_stick_datadisc(c):
    """UEFI, USB stick + a data disc in the CD drive: root is the stick."""
    stick_and_data_disc(c, uefi=True)


@test
def bios_cd_older_stick(c):
    """BIOS CD + a stick holding an older build: root is the CD."""
    older = older_build(c)
    vm = c.machine(c.cdrom() + c.usb_stick(older, boot=False))
    menu(vm, 'rescue')
    sh = boot_rescue(vm)
    check_root(sh, 'cd', disk_id(c.iso))
    require(has_disk(sh, disk_id(older)),
            'the guest has no disk with the older build\'s id %s' % disk_id(older))


@test
def bios_two_sticks(c):
    """BIOS, two sticks holding different builds: root is the booted one."""
    older = older_build(c)
    vm = c.machine(c.usb_stick(c.iso, older))
    menu(vm, 'rescue')
    sh = boot_rescue(vm)
    check_root(sh, 'stick', disk_id(c.iso))
    require(has_disk(sh, disk_id(older)),
            'the guest has no disk with the older build\'s id %s' % disk_id(older))


@test
def bios_stick_emptydrive(c):
    """BIOS, USB stick + an empty CD drive: root is the stick."""
    vm = c.machine(c.usb_stick() + c.empty_cdrom())
    menu(vm, 'rescue')
    sh = boot_rescue(vm)
    check_root(sh, 'stick', disk_id(c.iso))


@test
def wrong_fstype(c):
    """boot: rescue rootfstype=iso -- the kernel says there is no such
    filesystem type instead of waiting in silence."""
    vm = c.machine(c.cdrom())
    boot_line(vm, 'rescue rootfstype=iso')
    vm.wait(r'VFS: rootfstype=iso: this kernel has no filesystem type "iso"',
            'the kernel naming the unknown type', BOOT_TIMEOUT)
    vm.wait(r'VFS: the block filesystem types this kernel has:[^\n]* iso9660',
            'the list of types it has', 30)
    vm.wait(r'Kernel panic[^\n]*rootfstype=iso names no filesystem type',
            'the panic that ends the boot', 30, bad=[])


@test
def bad_partuuid_keeps_rootwait(c):
    """BIOS stick, boot: rescue root=PARTUUID=<malformed>,<ours> -- the bad
    candidate is dropped alone; rootwait still waits for the stick."""
    diskid = disk_id(c.iso)
    bad = 'PARTUUID=%s/PARTNROFF=x' % diskid
    vm = c.machine(c.usb_stick())
    boot_line(vm, 'rescue root=%s,PARTUUID=%s-01,/dev/sr0' % (bad, diskid))
    vm.wait(r'VFS: root candidate %s ignored: expected PARTUUID=' % re.escape(bad),
            'the kernel dropping the malformed candidate', BOOT_TIMEOUT)
    sh = boot_rescue(vm)
    check_root(sh, 'stick', diskid)
    require('Disabling rootwait' not in vm.buf, 'the kernel disabled rootwait')


@test
def root_too_long(c):
    """boot: rescue root=<300 characters> -- the kernel says root= is too
    long instead of cutting it."""
    vm = c.machine(c.cdrom())
    names = ','.join('/dev/sd%s1' % chr(ord('a') + i % 26) for i in range(30))
    boot_line(vm, 'rescue root=%s,/dev/sr0' % names)
    vm.wait(r'Kernel panic[^\n]*VFS: root= is longer than 255 characters',
            'the kernel refusing the long root=', BOOT_TIMEOUT, bad=[])


if __name__ == '__main__':
    sys.exit(main(__doc__))
