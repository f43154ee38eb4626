#!/usr/bin/python3
"""Repair 5, the encrypted root: a suite of its own beside tests/enter.py,
whose fixtures and helpers it uses, so that make check runs it beside
the enter suite, on the other core.

The crypt fixture is Debian 12 as its installer lays out "Guided - use
entire disk and set up encrypted LVM": /boot, then LUKS2 -> LVM (root,
swap_1), with an initramfs made on the host, which sees no dm-crypt, so
it has no cryptroot and the disk does not boot.  The repair opens it at
the rescue prompt, enters it and runs update-initramfs -u inside.

    tests/enter_crypt.py --iso build/rescue.iso --logdir build/test-logs
"""

import re
import sys

from enter import (CRYPT_CPU, DEBIAN_BAD, DEBIAN_BOOT_TIMEOUT, CRYPT_CHROOT_PROMPT, INITRAMFS_TIMEOUT,
                   MEM, UNLOCK, close_crypt, crypt_fsck_root, debian_poweroff, does_not_boot,
                   enter, fixture, fsck_clean, hd, leave, login_as_root, open_crypt,
                   rescue_with_disk)
from qemu import main, poweroff, require, test


@test
def repair_encrypted(c):
    """Repair 5: LUKS2 -> LVM root whose initramfs lacks cryptroot; opened
    in the rescue shell, update-initramfs -u inside, the passphrase typed
    at the disk's own initramfs prompt."""
    f = fixture(c, 'crypt')
    L = f.layout
    disk = f.copy(c)
    # The fixture's initramfs was made on the host, which sees no
    # dm-crypt: without cryptroot it cannot open sda5 and gives up.
    does_not_boot(c, disk, r'ALERT! [^\n]*%s does not exist' % re.escape(L['ROOT_LV']),
                  'Debian\'s initramfs to give up on the encrypted root', 400)

    vm, sh = rescue_with_disk(c, disk, CRYPT_CPU)
    st, out = sh.run('rescue-enter', ok=False)
    want = r'%s +crypto_LUKS +cryptsetup open %s %s' % (L['LUKS_DEVICE'], L['LUKS_DEVICE'],
                                                      L['LUKS_NAME'])
    require(st == 1 and re.search(want, out), 'rescue-enter does not name /%s/: %s' % (want, out))
    open_crypt(vm, sh, L)
    inner = enter(vm, prompt=CRYPT_CHROOT_PROMPT)
    inner.run('update-initramfs -u', secs=INITRAMFS_TIMEOUT)
    # The cryptsetup hook's crypttab in the initramfs: empty in the
    # host-built one, sda5's line now.
    out = inner.out('unmkinitramfs /boot/initrd.img-* /run/initrd && '
                    'find /run/initrd -path "*/cryptroot/crypttab" -exec cat {} +', secs=600)
    require(re.search(r'^%s UUID=%s ' % (L['LUKS_NAME'], L['LUKS_UUID']), out, re.M),
            'the new initramfs does not unlock %s: %r' % (L['LUKS_NAME'], out))
    leave(vm, sh)
    close_crypt(sh, L)
    poweroff(vm)

    vm = c.machine(hd(disk, 0) + CRYPT_CPU, mem=MEM)
    vm.wait(r'GNU GRUB', 'the disk\'s own GRUB', 120, bad=DEBIAN_BAD)
    vm.wait(UNLOCK, 'the initramfs to ask for the passphrase', DEBIAN_BOOT_TIMEOUT, bad=DEBIAN_BAD)
    vm.send(L['LUKS_PASSPHRASE'] + '\r', label='(the passphrase)')
    sh = login_as_root(vm, L['ROOT_PASSWORD'])
    out = sh.out('cat /proc/cmdline; findmnt -n -o SOURCE,FSTYPE /; lsblk -o NAME,TYPE,FSTYPE,MOUNTPOINTS')
    require(re.search(r'^%s +ext4$' % re.escape(L['ROOT_LV']), out, re.M),
            'the root is not the LV: %s' % out)
    debian_poweroff(vm, sh)
    fsck_clean(c, disk, L)
    crypt_fsck_root(c, disk, L)


if __name__ == '__main__':
    sys.exit(main(__doc__))
