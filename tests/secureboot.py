#!/usr/bin/python3
"""Secure Boot tests for the rescue ISO.

OVMF's Secure Boot build (OVMF_CODE_4M.secboot.fd, q35 with SMM) boots the
real ISO through shim, Debian's signed GRUB and the kernel that make
signed with the builder's key:

  - a PC as sold (Microsoft's keys only): GRUB refuses the kernel until
    the ISO's certificate is enrolled; the enrollment is done in
    MokManager over the serial console, as a person would; then the ISO
    boots from CD and from a USB stick with Secure Boot on, raw block
    I/O works, and the kernel loads only modules signed with the builder's
    key;
  - a machine whose db holds Debian's snakeoil test key: an ISO signed
    with that key boots, the ISO signed with the builder's key is refused;
  - two builds with the same key are identical.

Secure Boot off is boottest.py's uefi_* tests, on plain OVMF.

    tests/secureboot.py --iso build/rescue.iso --logdir build/test-logs [TEST...]

Building the second ISO needs build-iso.sh's inputs: run the suite through
`make check-secureboot`, which exports them as BUILD_ISO.
"""

import os
import re
import shutil
import sys

from drivers import check_signatures, signature_disk
from qemu import (BOOT_TIMEOUT, MENU, MENU_TIMEOUT, MENU_TITLE, boot_rescue,
                  build_another_iso,
                  check_root_on_partition, host, main, menu, poweroff, require,
                  root_device, sha256, test)

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Debian's snakeoil test key (package ovmf; README.Debian gives its
# passphrase), in db of OVMF_VARS_4M.snakeoil.fd.
SNAKEOIL_KEY = '/usr/share/ovmf/PkKek-1-snakeoil.key'
SNAKEOIL_CERT = '/usr/share/ovmf/PkKek-1-snakeoil.pem'
SNAKEOIL_PASS = 'snakeoil'
CERT_ON_ESP = 'rescue.cer'              # /EFI/rescue.cer

# What refusals look like.  GRUB, when shim's verifier rejects the kernel;
# OVMF, when the firmware rejects shim (BdsDxe: "failed to load Boot0001
# ... Access Denied").
GRUB_REFUSED = r'error: bad shim signature'
FIRMWARE_REFUSED = r'failed to load Boot\d+[^\n]*Access Denied'
DOWN = '\x1b[B'                         # the cursor-down key on a VT100
EFI_GLOBAL = '8be4df61-93ca-11d2-aa0d-00e098032b8c'    # EFI_GLOBAL_VARIABLE


def build_iso(c, name, key, cert):
    """Another ISO from make's inputs, signed with `key`, in the work dir."""
    return build_another_iso(c, name, SIGN_KEY=key, SIGN_CERT=cert)


def snakeoil_key(c):
    """The snakeoil key without its passphrase, which sbsign would ask
    for on the terminal."""
    key = os.path.join(c.work, 'snakeoil.key')
    r = host(c, ['openssl', 'pkey', '-in', SNAKEOIL_KEY, '-passin', 'pass:' + SNAKEOIL_PASS,
                 '-out', key])
    require(r.returncode == 0, 'cannot decrypt ' + SNAKEOIL_KEY)
    return key, SNAKEOIL_CERT


def own_key(c, name):
    """A fresh key pair, as image/signing-key.sh makes for a builder."""
    key = os.path.join(c.work, name + '.key')
    cert = os.path.join(c.work, name + '.pem')
    r = host(c, [os.path.join(TOP, 'image', 'signing-key.sh'), key, cert, 'create'])
    require(r.returncode == 0, 'signing-key.sh failed: ' + r.stderr.strip()[-300:])
    return key, cert


# ---------------------------------------------------------------------------
# MokManager over the serial console.  OVMF mirrors its text console to the
# serial port; MokManager draws each list in a box, one item per row, and
# its cursor starts on the first item.

def mok_choose(vm, heading, item, secs=60):
    """Wait for the list under `heading`, move to `item`, press Enter."""
    m = vm.wait(re.escape(heading), 'MokManager\'s "%s"' % heading, secs)
    start = m.start()
    vm.wait(re.escape(item), '"%s" under "%s"' % (item, heading), secs)
    vm.wait_quiet(1, 10)
    # Rows of the boxes since the heading: "│ text │"; a border is made of
    # line-drawing characters only (not ASCII).  The list is the last run
    # of rows that holds the item.
    runs, run = [], []
    for line in vm.buf[start:].splitlines():
        row = re.match(r'^\W\s*(\S.*?)\s*\W$', line)
        if row and re.search(r'[!-~]', row.group(1)):
            run.append(row.group(1))
        elif run:
            runs.append(run)
            run = []
    runs.append(run)
    lists = [r for r in runs if item in r]
    require(lists, 'MokManager shows no "%s" under "%s"' % (item, heading))
    rows = lists[-1]
    vm.note('MokManager list %s' % rows)
    vm.send(DOWN * rows.index(item) + '\r', label='%d x Down, Enter: "%s"'
            % (rows.index(item), item))


def without_el_torito(c):
    """A copy of the ISO with its El Torito boot record blanked.  OVMF
    boots a stick's El Torito image when there is one; many PCs boot its
    MBR partition 2, the ESP, instead, and so does OVMF without it."""
    path = os.path.join(c.work, 'no-el-torito.iso')
    shutil.copyfile(c.iso, path)
    with open(path, 'r+b') as f:
        f.seek(17 * 2048)           # the volume descriptor after the PVD
        record = f.read(2048)
        require(record[1:6] == b'CD001' and b'EL TORITO SPECIFICATION' in record,
                'sector 17 of the ISO is not the El Torito boot record')
        f.seek(17 * 2048)
        f.write(bytes(2048))
    return path


def enroll_certificate(c, efivars, disks=None):
    """From the GRUB menu's Enroll entry, enroll /EFI/rescue.cer from the
    ESP with MokManager, as the README tells a person to; then reboot."""
    vm = c.machine(disks or c.cdrom(), uefi='ms', efivars=efivars)
    menu(vm, 'mok', uefi=True)
    vm.wait(r'Press any key to perform MOK management', 'MokManager', BOOT_TIMEOUT)
    vm.send(' ', label='a key (MokManager waits 10 s)')
    mok_choose(vm, 'Perform MOK management', 'Enroll key from disk')
    mok_choose(vm, 'Select Key', 'RESCUE_EFI')         # the volume: the ESP
    mok_choose(vm, 'Select Key', 'EFI/')
    mok_choose(vm, 'Select Key', CERT_ON_ESP)
    mok_choose(vm, '[Enroll MOK]', 'Continue')
    mok_choose(vm, 'Enroll the key(s)?', 'Yes')
    mok_choose(vm, 'Perform MOK management', 'Reboot')
    status = vm.expect_exit('QEMU to exit at MokManager\'s reboot (-no-reboot)', 60)
    require(status == 0, 'QEMU exited with status %s after MokManager' % status)


def refused_by_grub(c, disks, efivars=None, uefi='ms'):
    """GRUB's menu comes up (shim and GRUB are trusted) but the kernel is
    refused."""
    vm = c.machine(disks, uefi=uefi, efivars=efivars)
    menu(vm, 'rescue', uefi=True)
    vm.wait(GRUB_REFUSED, 'GRUB refusing the kernel ("bad shim signature")', BOOT_TIMEOUT)
    require('Linux version' not in vm.buf, 'Linux started although refused')
    vm.stop()


def secure_boot_shell(c, disks, efivars, uefi='ms'):
    """Boot the default entry with Secure Boot on; check that it was on."""
    vm = c.machine(disks, uefi=uefi, efivars=efivars)
    menu(vm, 'rescue', uefi=True)
    sh = boot_rescue(vm)
    # dmesg -r: with the <level> prefix, so that Shell.run does not take
    # the lines for kernel messages on the console and drop them.
    said = sh.out('dmesg -r | grep -i "secure boot"', ok=False)
    require(re.search(r'Secure boot enabled', said),
            'dmesg does not say "Secure boot enabled": %r' % said.strip())
    # The firmware's own word: the SecureBoot variable (4 bytes of
    # attributes, then 1 for on).
    sh.run('mount -t efivarfs efivarfs /sys/firmware/efi/efivars')
    var = sh.out('od -An -tu1 /sys/firmware/efi/efivars/SecureBoot-%s' % EFI_GLOBAL).split()
    require(var[-1:] == ['1'], 'the SecureBoot variable reads %r, not 1 at the end' % var)
    return vm, sh


def raw_block_io(c, sh, disk, disk_sum):
    """What a rescue system needs from a disk under Secure Boot: an ioctl
    (blockdev) and raw reads and writes of the whole device."""
    size = sh.out('blockdev --getsize64 /dev/vda').strip().splitlines()[-1]
    require(size == str(os.path.getsize(disk)), 'blockdev --getsize64 says %r' % size)
    out = sh.out('dd if=/dev/vda bs=1M 2>/dev/null | sha256sum')
    require(disk_sum in out, 'dd of the whole disk gives another sha256: %r' % out.strip())
    sh.run('echo raw-write-under-secure-boot | dd of=/dev/vda bs=512 seek=1 conv=fsync')
    lockdown, _ = sh.run('dmesg | grep -i "locked down"', ok=False)
    require(lockdown != 0, 'the kernel reports a lockdown')


@test
def ms_enroll(c):
    """A PC as sold: refused until enrolled; MokManager enrolls the key;
    then CD and USB boot with Secure Boot on; raw disk I/O works; an
    unsigned module and one signed with another key are refused, the
    ISO's own loads."""
    efivars = c.efivars('ms')
    refused_by_grub(c, c.cdrom(), efivars)
    enroll_certificate(c, efivars)

    disk = c.image('data.img', 8, data=os.urandom(8 << 20))
    disk_sum = sha256(disk)
    data = ['-drive', 'if=none,id=d1,format=raw,file=' + disk,
            '-device', 'virtio-blk-pci,drive=d1',
            '-drive', 'if=none,id=d2,format=raw,file=' + signature_disk(c),
            '-device', 'virtio-blk-pci,drive=d2']
    vm, sh = secure_boot_shell(c, c.cdrom() + data, efivars)
    num, name = root_device(sh)
    require(name == 'sr0', 'root filesystem is on %s (%s), not sr0' % (name, num))
    raw_block_io(c, sh, disk, disk_sum)
    check_signatures(sh, '/dev/vdb')
    poweroff(vm)
    with open(disk, 'rb') as f:
        f.seek(512)
        require(f.read(27) == b'raw-write-under-secure-boot', 'the raw write is not on the disk')

    vm, sh = secure_boot_shell(c, c.usb_stick(), efivars)
    check_root_on_partition(sh)
    poweroff(vm)


@test
def ms_enroll_esp(c):
    """A PC as sold booting a stick through its ESP partition (no El
    Torito): GRUB reads the ESP's grub.cfg, the ESP's MokManager enrolls
    the key, then the rescue shell comes up with root on sda1."""
    stick = c.usb_stick(without_el_torito(c))
    efivars = c.efivars('ms')
    refused_by_grub(c, stick, efivars)
    enroll_certificate(c, efivars, stick)
    vm, sh = secure_boot_shell(c, stick, efivars)
    check_root_on_partition(sh)
    poweroff(vm)


@test
def ms_usb_refused(c):
    """A PC as sold, from a USB stick: the kernel is refused (nothing
    enrolled)."""
    refused_by_grub(c, c.usb_stick())


@test
def snakeoil_own_db(c):
    """db holds only Debian's snakeoil key: the ISO signed with it boots;
    the ISO signed with the builder's key is refused by the firmware."""
    iso = build_iso(c, 'snakeoil', *snakeoil_key(c))
    vm, sh = secure_boot_shell(c, c.cdrom(iso), c.efivars('snakeoil'), uefi='snakeoil')
    poweroff(vm)

    vm = c.machine(c.cdrom(), uefi='snakeoil')
    vm.wait(FIRMWARE_REFUSED, 'the firmware refusing shim', MENU_TIMEOUT)
    vm.wait_quiet(3, 30)
    require(MENU_TITLE not in vm.buf, 'GRUB started although its loader was refused')


@test
def signed_reproducible(c):
    """Two builds with the same key give the same ISO; the kernel on it
    verifies with the certificate; another key gives another ISO."""
    snakeoil = snakeoil_key(c)
    a = build_iso(c, 'a', *snakeoil)
    b = build_iso(c, 'b', *snakeoil)
    require(sha256(a) == sha256(b), 'two builds with the same key differ')
    kernel = os.path.join(c.work, 'vmlinuz')
    r = host(c, ['xorriso', '-osirrox', 'on', '-indev', a, '-extract', '/boot/vmlinuz', kernel])
    require(r.returncode == 0, 'cannot extract /boot/vmlinuz from the ISO')
    r = host(c, ['sbverify', '--cert', SNAKEOIL_CERT, kernel])
    require(r.returncode == 0, 'the kernel does not verify with the snakeoil certificate')
    key, cert = own_key(c, 'other')
    r = host(c, ['sbverify', '--cert', cert, kernel])
    require(r.returncode != 0, 'the kernel verifies with an unrelated certificate')
    other = build_iso(c, 'other', key, cert)
    require(sha256(other) != sha256(a), 'another key gives the same ISO')


if __name__ == '__main__':
    sys.exit(main(__doc__))
