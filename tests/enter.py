#!/usr/bin/python3
"""Enter-and-repair tests: a real Debian 12, broken on the host, repaired
from the rescue ISO with rescue-enter and the target's own tools, then
booted on its own to its login prompt.

The fixture is a genuine Debian 12 from Debian's packages
(tests/fixtures/debian12.sh: mmdebstrap, mke2fs -d, sfdisk/sgdisk, dd on
the host), cached under build/fixtures/ keyed on that script, its package
list and the candidate versions of those packages.  Its boot loader is
installed the only way the host allows without a block device: by booting
the rescue ISO with the disk and running rescue-enter, then the target's
own `grub-install` and `update-grub`.

Each repair test: copy the fixture, break it on the host (dd, debugfs -w,
mtools: no mounts), boot the rescue ISO with it, repair inside
rescue-enter, power off, boot the disk alone (SeaBIOS, or OVMF for the
GPT+ESP variant) to its login prompt, log in as root, power it off, and
run `e2fsck -fn` on the host.

The encrypted variant (crypt: LUKS2 -> LVM, as Debian's installer lays it
out) gets its LUKS, LVM and boot loader in a second stage typed at the
rescue prompt (make_crypt_stack); its root is checked from the rescue ISO.

    tests/enter.py --iso build/rescue.iso --logdir build/test-logs [TEST...]
"""

import hashlib
import os
import random
import re
import shutil
import subprocess
import sys
import time

import fixture_cache
import qemu
from qemu import (Fail, Shell, boot_rescue, host, main, menu, poweroff, require,
                  sha256, test)

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE_SCRIPT = os.path.join(HERE, 'fixtures', 'debian12.sh')
FIXTURE_PACKAGES = os.path.join(HERE, 'fixtures', 'debian12.packages')
# What each variant adds to debian12.packages (as debian12.sh does).
VARIANT_PACKAGES = {'bios': ['grub-pc'], 'uefi': ['grub-efi-amd64', 'efibootmgr'],
                    'crypt': ['grub-pc', 'cryptsetup-initramfs', 'lvm2']}

MEM = 512                   # Debian's initramfs unpacks ~36 MiB
DEBIAN_BOOT_TIMEOUT = 240   # disk alone -> login prompt, under TCG
REPAIR_TIMEOUT = 600        # grub-install, update-grub under TCG
# mkinitramfs, even with the fixtures' MODULES=dep, is the slowest thing
# under TCG: 85 to 155 s here.
INITRAMFS_TIMEOUT = 600
LOGIN = r'debian12 login: '
DEBIAN_PROMPT = r'root@debian12:[^\n#]*# '
CHROOT_PROMPT = r'\[chroot debian-12 sda\d\] [^\n#]*# '
# On the encrypted fixture the root is an LV: the prompt names it.
CRYPT_CHROOT_PROMPT = r'\[chroot debian-12 debian12--vg-root\] [^\n#]*# '
CRYPT_BUILD_TIMEOUT = 600   # dd of the root image through dm-crypt, under TCG
# cryptsetup-initramfs's question at boot, on the serial console.
UNLOCK = r'Please unlock disk sda5_crypt: '

# What a broken Debian boot looks like: fail at once, by name.
DEBIAN_BAD = qemu.BAD + [
    ('emergency mode', r'You are in emergency mode[^\n]*|Give root password for maintenance'),
    ('initramfs shell', r'\(initramfs\) '),
    ('GRUB error', r'error: [^\n]*'),
    ('no boot loader', r'Boot failed[^\n]*|No bootable device[^\n]*'),
    ('login refused', r'Login incorrect'),
]


# ---------------------------------------------------------------------------
# The fixture


def fixture_key(variant):
    """What made the fixture: the script, the package list, and the
    versions apt would install now."""
    h = hashlib.sha256()
    for path in (FIXTURE_SCRIPT, FIXTURE_PACKAGES):
        with open(path, 'rb') as f:
            h.update(f.read())
    pkgs = [l.split('#')[0].strip() for l in open(FIXTURE_PACKAGES)]
    pkgs = [p for p in pkgs if p] + VARIANT_PACKAGES[variant]
    r = subprocess.run(['apt-cache', 'policy'] + pkgs, capture_output=True, text=True)
    h.update(variant.encode())
    h.update(' '.join(re.findall(r'Candidate: (\S+)', r.stdout)).encode())
    return h.hexdigest()[:12]


def read_layout(path):
    with open(path) as f:
        return dict(l.strip().split('=', 1) for l in f if '=' in l)


class Disk:
    """A disk image of the fixture and, for UEFI, the firmware variables
    that go with it (the boot entry grub-install wrote)."""

    def __init__(self, path, uefi_vars=None):
        self.path = path
        self.vars = uefi_vars
        self.uefi = uefi_vars is not None


class Fixture:
    """A cached, bootable Debian 12 disk of one variant (tests/fixture_cache.py:
    under RESCUE_CACHE/fixtures/, each hit checked against its checksums)."""

    def __init__(self, variant, iso):
        self.variant = variant
        self.uefi = variant == 'uefi'
        base = os.path.join(os.path.dirname(iso), 'fixtures')
        # The .debs go to the build cache (scripts/cache.mk) when there is
        # one, beside those `make` downloaded; otherwise next to the disks.
        cache = os.environ.get('RESCUE_CACHE')
        self.debs = os.path.join(cache or base, 'debs')
        key = fixture_key(variant)
        self.unbooted = fixture_cache.Entry(base, 'debian12-%s-unbooted' % variant, key)
        self.booted = fixture_cache.Entry(base, 'debian12-%s' % variant, key)
        self.dir = self.booted.dir

    @property
    def layout(self):
        return read_layout(os.path.join(self.dir, 'layout'))

    def disk_in(self, d):
        return Disk(os.path.join(d, 'disk.img'),
                    os.path.join(d, 'OVMF_VARS.fd') if self.uefi else None)

    def install(self, c, d):
        """Stage 2, from the rescue ISO: what needs a block device.
        Every variant gets its boot loader from the target's own
        grub-install (under UEFI it writes EFI/debian on the ESP and a boot
        entry into the firmware's variables, kept with the disk).  crypt
        first gets LUKS2 and LVM on sda5 and its root filesystem copied
        into the root LV."""
        disk = self.disk_in(d)
        layout = read_layout(os.path.join(d, 'layout'))
        if self.variant == 'crypt':
            root_img = os.path.join(d, 'root.img')
            make_crypt_stack(c, disk, Disk(root_img), layout)
            os.unlink(root_img)
            return
        if disk.uefi:
            shutil.copyfile(os.path.join(qemu.OVMF_DIR, qemu.OVMF["plain"][1]), disk.vars)
        enter_and_run(c, disk, ['grub-install /dev/sda && update-grub'])
        fsck_clean(c, disk, layout)

    def ensure_unbooted(self, c):
        """Stage 1, on the host: the system on a disk without boot loader
        (enough for a kernel that mounts its root itself).  Its dir."""
        def build(tmp):
            # One host stage at a time: they share the .deb cache.
            with fixture_cache.locked(self.debs + '.lock'):
                r = subprocess.run([FIXTURE_SCRIPT, self.variant, tmp, self.debs],
                                   stdout=c.log, stderr=subprocess.STDOUT)
            require(r.returncode == 0, 'debian12.sh %s failed (status %d)'
                    % (self.variant, r.returncode))
        return self.unbooted.get(build, c.log)

    def ensure(self, c):
        """Build the fixture if it is not cached, or not as it was made;
        log to c.log."""
        def build(tmp):
            unbooted = self.ensure_unbooted(c)
            for name in fixture_cache.files(unbooted):
                subprocess.run(['cp', '--sparse=always', os.path.join(unbooted, name),
                                os.path.join(tmp, name)], check=True)
            self.install(c, tmp)
        self.booted.get(build, c.log)

    def copy(self, c):
        """A private copy of the disk (and variables) for one test."""
        src = self.disk_in(self.dir)
        dst = self.disk_in(c.work)
        subprocess.run(['cp', '--sparse=always', src.path, dst.path], check=True)
        if src.vars:
            shutil.copyfile(src.vars, dst.vars)
        return dst


FIXTURES = {}


def fixture(c, variant):
    if variant not in FIXTURES:
        FIXTURES[variant] = Fixture(variant, c.iso)
    f = FIXTURES[variant]
    f.ensure(c)
    return f


# ---------------------------------------------------------------------------
# Machines


def hd(disk, bootindex, bus='ide.0', unit=0, name='hd'):
    """A raw IDE disk: ide.0 unit 0 is sda, unit 1 sdb; ide.1 unit 1 is
    sdc (ide.1 unit 0 is the CD drive).  cache=unsafe: the image is a
    scratch copy, so the guest's flushes need not reach the host's disk;
    with them, each flush waited for the host to write out the gigabytes
    of the copy still in its page cache (minutes on a busy host)."""
    return ['-drive', 'if=none,id=%s,format=raw,cache=unsafe,file=%s' % (name, disk.path),
            '-device', 'ide-hd,drive=%s,bus=%s,unit=%d,bootindex=%d'
            % (name, bus, unit, bootindex)]


def rescue_with_disk(c, disk, extra=()):
    """The rescue ISO (CD, first) and the disk (sda): the rescue shell."""
    vm = c.machine(c.cdrom() + hd(disk, 1) + list(extra), mem=MEM,
                   uefi=disk.uefi, efivars=disk.vars)
    menu(vm, 'rescue', uefi=disk.uefi)
    return vm, boot_rescue(vm)


def enter(vm, cmd='rescue-enter', prompt=CHROOT_PROMPT):
    """Type rescue-enter; wait for the target's prompt; a Shell in it."""
    vm.type_line(cmd)
    vm.wait(prompt, 'the chroot prompt of rescue-enter', 60)
    inner = Shell(vm, prompt)
    inner.run('stty cols 250', ok=False)
    return inner


def no_enter_mounts(sh):
    out = sh.out('grep rescue-enter /proc/mounts', ok=False)
    require('rescue-enter' not in out, 'still mounted: %s' % out.strip())


def leave(vm, sh):
    """exit the chroot: everything unmounted, back at the rescue prompt."""
    vm.type_line('exit')
    vm.wait(r'rescue-enter: left debian-12; all unmounted', 'rescue-enter to unmount all', 60)
    vm.wait(qemu.PROMPT, 'the rescue prompt', 30)
    no_enter_mounts(sh)


def enter_and_run(c, disk, cmds, secs=REPAIR_TIMEOUT):
    """Rescue ISO + disk: rescue-enter, run cmds inside, exit, power off."""
    vm, sh = rescue_with_disk(c, disk)
    inner = enter(vm)
    for cmd in cmds:
        inner.run(cmd, secs=secs)
    leave(vm, sh)
    poweroff(vm)
    return vm


def boot_disk(c, disk, password):
    """The disk alone: firmware, its GRUB, its kernel and initramfs,
    systemd, login on the serial console.  Returns the root shell."""
    vm = c.machine(hd(disk, 0), mem=MEM, uefi=disk.uefi, efivars=disk.vars)
    vm.wait(r'GNU GRUB', 'the disk\'s own GRUB', 120, bad=DEBIAN_BAD)
    return vm, login_as_root(vm, password)


def login_as_root(vm, password, secs=DEBIAN_BOOT_TIMEOUT, bad=DEBIAN_BAD, started=None):
    """Debian's login prompt on the serial console (within `secs`, failing
    on `bad`): log in as root.  With `started` (a time.monotonic()), the
    log notes how long the boot to the prompt took.  Returns the root shell."""
    vm.wait(LOGIN, 'the Debian login prompt', secs, bad=bad)
    if started is not None:
        vm.note('booted to login in %.0f s' % (time.monotonic() - started))
    vm.wait_quiet(1, 10)
    vm.type_line('root')
    vm.wait(r'Password: ', 'the password prompt', 60, bad=DEBIAN_BAD)
    vm.send(password + '\r', label='(the password)')
    vm.wait(DEBIAN_PROMPT, 'root\'s shell prompt', 90, bad=DEBIAN_BAD)
    sh = Shell(vm, DEBIAN_PROMPT)
    sh.run('stty cols 250', ok=False)
    return sh


def does_not_boot(c, disk, instead, what, secs):
    """The broken disk alone does not boot: it shows `instead` (a regex),
    or, with instead=None, neither GRUB nor a login appears in `secs`
    (boot code of zeros just hangs)."""
    vm = c.machine(hd(disk, 0), mem=MEM, uefi=disk.uefi, efivars=disk.vars)
    boots = [r'GNU GRUB  version', LOGIN]
    if instead is not None:
        vm.wait(instead, what, secs, bad=qemu.BAD + [('it boots', LOGIN)])
    else:
        try:
            m = vm.wait(boots, what, secs, bad=qemu.BAD)
        except Fail as e:
            vm.note('as expected: %s' % e)
        else:
            raise Fail('the broken disk still boots: "%s"' % m.group(0))
    vm.stop()


def debian_poweroff(vm, sh):
    """A clean shutdown, so that the host's e2fsck finds it clean."""
    sh.run('systemctl --failed --no-legend --plain | cat', ok=False)
    vm.type_line('systemctl poweroff')
    status = vm.expect_exit('Debian to power off', 120, bad=qemu.BAD)
    require(status == 0, 'QEMU exited with status %s after poweroff' % status)


def fsck_clean(c, disk, layout):
    """The host's fsck -n on the fixture's filesystems it can read (all
    but an encrypted root: crypt_fsck_root): no error."""
    for key, what in (('ROOT_OFFSET', 'the root filesystem'), ('BOOT_OFFSET', '/boot')):
        if key not in layout:
            continue
        r = host(c, ['e2fsck', '-fn', '%s?offset=%s' % (disk.path, layout[key])])
        require(r.returncode == 0, 'e2fsck -fn on %s: status %d: %s'
                % (what, r.returncode, (r.stdout + r.stderr).strip()[-300:]))
    if 'ESP_OFFSET' in layout:
        esp = disk.path + '.esp'
        subprocess.run(['dd', 'if=' + disk.path, 'of=' + esp, 'bs=1M', 'status=none',
                        'skip=%d' % (int(layout['ESP_OFFSET']) >> 20),
                        'count=%d' % (int(layout['ESP_SIZE']) >> 20)], check=True)
        r = host(c, ['fsck.fat', '-n', esp])
        os.unlink(esp)
        require(r.returncode == 0, 'fsck.fat -n on the ESP: status %d: %s'
                % (r.returncode, (r.stdout + r.stderr).strip()[-300:]))


def debugfs(c, disk, layout, cmds):
    """Read or change files of the image's root filesystem (no mount).
    One command's output is returned as is (-f would echo the command)."""
    script = os.path.join(c.work, 'debugfs.cmds')
    with open(script, 'w') as f:
        f.write('\n'.join(cmds) + '\n')
    how = ['-R', cmds[0]] if len(cmds) == 1 else ['-f', script]
    r = host(c, ['debugfs', '-w'] + how +
             ['%s?offset=%s' % (disk.path, layout['ROOT_OFFSET'])])
    errors = [l for l in r.stderr.splitlines()
              if l.strip() and not l.startswith('debugfs 1.')]
    require(r.returncode == 0 and not errors,
            'debugfs -w failed: %s' % ' '.join(errors)[-300:])
    return r.stdout


def boots_and_logs_in(c, f, disk, password):
    vm, sh = boot_disk(c, disk, password)
    out = sh.out('grep PRETTY_NAME /etc/os-release; findmnt -n -o SOURCE,FSTYPE /')
    require('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"' in out,
            'not the Debian 12 fixture: %s' % out.strip())
    debian_poweroff(vm, sh)
    fsck_clean(c, disk, f.layout)


# ---------------------------------------------------------------------------
# The encrypted root: LUKS2 and LVM, typed at the rescue prompt


def open_crypt(vm, sh, layout):
    """cryptsetup open, the passphrase typed at its prompt (which must
    not echo it), then vgchange -ay: the root LV is there."""
    dev, name, secret = layout['LUKS_DEVICE'], layout['LUKS_NAME'], layout['LUKS_PASSPHRASE']
    out = sh.out('cryptsetup open %s %s' % (dev, name), secs=120,
                 answers=[(r'Enter passphrase for %s: ' % dev, secret, '(the passphrase)')])
    require(secret not in out, 'cryptsetup echoed the passphrase: %s' % out)
    out = sh.out('vgchange -ay %s' % layout['VG'], secs=60)
    require('2 logical volume(s) in volume group "%s" now active' % layout['VG'] in out,
            'vgchange -ay: %s' % out.strip())


def close_crypt(sh, layout):
    """Everything closed in reverse order, as before pulling the disk.
    (vgchange -an once took more than 3 minutes under TCG after
    update-initramfs, though it had said "0 logical volume(s) ... now
    active"; usually it takes a second.  Cause not found yet.)"""
    sh.run('vgchange -an %s' % layout['VG'], secs=600)
    sh.run('cryptsetup close %s' % layout['LUKS_NAME'], secs=120)


# The machine for the encrypted disks: a CPU with AES-NI, as PCs have had
# since 2010.  QEMU's default CPU has none, so dm-crypt falls back to
# table-driven AES, which TCG runs so slowly that writing back what
# update-initramfs wrote to the root LV took longer than the test.
CRYPT_CPU = ['-cpu', 'max']


def make_crypt_stack(c, disk, root_img, layout):
    """The QEMU stage of the crypt fixture, as a person would type it at
    the rescue prompt: LUKS2 on sda5 (Argon2id, cryptsetup's defaults),
    LVM in it as Debian's installer names it, the host-made root
    filesystem (sdb) copied into the root LV, swap made, then the target's
    own grub-install through rescue-enter.  (No e2fsck of the root LV
    here: the image is clean as mke2fs -d made it, and under TCG each
    pass through software AES takes minutes; the repair test checks it
    at its end.)"""
    vm, sh = rescue_with_disk(c, disk, hd(root_img, 2, unit=1, name='rootimg'))
    dev, name, secret = layout['LUKS_DEVICE'], layout['LUKS_NAME'], layout['LUKS_PASSPHRASE']
    sh.run('cryptsetup luksFormat --type luks2 --uuid %s %s' % (layout['LUKS_UUID'], dev),
           secs=300, answers=[(r'Are you sure\? \(Type .yes. in capital letters\): ', 'YES', 'YES'),
                              (r'Enter passphrase for %s: ' % dev, secret, '(the passphrase)'),
                              (r'Verify passphrase: ', secret, '(the passphrase)')])
    sh.run('cryptsetup luksDump %s | grep -E "PBKDF|Memory|Time cost|Threads"' % dev)
    sh.run('cryptsetup open %s %s' % (dev, name), secs=120,
           answers=[(r'Enter passphrase for %s: ' % dev, secret, '(the passphrase)')])
    pv = '/dev/mapper/' + name
    sh.run('pvcreate %s && vgcreate %s %s' % (pv, layout['VG'], pv), secs=60)
    sh.run('lvcreate -L %sM -n root %s && lvcreate -l 100%%FREE -n swap_1 %s'
           % (layout['ROOT_MIB'], layout['VG'], layout['VG']), secs=60)
    sh.run('dd if=/dev/sdb of=%s bs=1M' % layout['ROOT_LV'], secs=CRYPT_BUILD_TIMEOUT)
    sh.run('mkswap %s' % layout['SWAP_LV'], secs=60)
    # sdb holds the same system: name the one to enter.
    inner = enter(vm, 'rescue-enter ' + layout['ROOT_LV'], prompt=CRYPT_CHROOT_PROMPT)
    inner.run('grub-install /dev/sda && update-grub', secs=REPAIR_TIMEOUT)
    leave(vm, sh)
    close_crypt(sh, layout)
    poweroff(vm)
    fsck_clean(c, disk, layout)


def crypt_fsck_root(c, disk, layout):
    """The encrypted root, checked from the rescue ISO: e2fsck -fn."""
    vm, sh = rescue_with_disk(c, disk, CRYPT_CPU)
    open_crypt(vm, sh, layout)
    sh.run('e2fsck -fn %s' % layout['ROOT_LV'], secs=300)
    close_crypt(sh, layout)
    poweroff(vm)


# ---------------------------------------------------------------------------
# Tests


@test
def fixture_bios(c):
    """The BIOS/MBR fixture boots on its own (SeaBIOS) and root logs in."""
    f = fixture(c, 'bios')
    boots_and_logs_in(c, f, f.copy(c), f.layout['ROOT_PASSWORD'])


@test
def fixture_uefi(c):
    """The GPT+ESP fixture boots on its own (OVMF) and root logs in."""
    f = fixture(c, 'uefi')
    boots_and_logs_in(c, f, f.copy(c), f.layout['ROOT_PASSWORD'])


@test
def repair_mbr(c):
    """Repair 1, BIOS: MBR boot code zeroed; grub-install + update-grub."""
    f = fixture(c, 'bios')
    disk = f.copy(c)
    with open(disk.path, 'r+b') as fh:
        fh.write(bytes(440))
    does_not_boot(c, disk, None, 'GRUB (the MBR has no boot code)', 20)
    enter_and_run(c, disk, ['grub-install /dev/sda && update-grub',
                            # as the installer's: root named by UUID
                            'grep -m1 "root=UUID=%s" /boot/grub/grub.cfg'
                            % f.layout['ROOT_UUID']])
    boots_and_logs_in(c, f, disk, f.layout['ROOT_PASSWORD'])


@test
def repair_esp(c):
    """Repair 1, UEFI: the ESP's EFI/debian removed; grub-install --removable."""
    f = fixture(c, 'uefi')
    disk = f.copy(c)
    esp = '%s@@%s' % (disk.path, f.layout['ESP_OFFSET'])
    r = host(c, ['mdeltree', '-i', esp, '::/EFI/debian'])
    require(r.returncode == 0, 'mdeltree EFI/debian failed: ' + r.stderr.strip())
    does_not_boot(c, disk, r'Shell> ', 'the firmware to give up (UEFI shell)', 120)
    enter_and_run(c, disk, ['grub-install --removable'])
    r = host(c, ['mdir', '-i', esp, '::/EFI/BOOT'])
    require('BOOTX64' in r.stdout, 'no EFI/BOOT/BOOTX64.EFI on the ESP: ' + r.stdout)
    boots_and_logs_in(c, f, disk, f.layout['ROOT_PASSWORD'])


NEW_PASSWORD = 'Rescued-2026'


@test
def repair_password(c):
    """Repair 2: root's password forgotten; passwd root inside."""
    f = fixture(c, 'bios')
    disk = f.copy(c)
    vm, sh = rescue_with_disk(c, disk)
    inner = enter(vm)
    vm.type_line('passwd root')
    for prompt in ('New password: ', 'Retype new password: '):
        vm.wait(prompt, 'passwd\'s "%s"' % prompt.strip(), 60)
        vm.send(NEW_PASSWORD + '\r', label='(the new password)')
    vm.wait('password updated successfully', 'passwd to finish', 60)
    vm.wait(CHROOT_PROMPT, 'the chroot prompt', 30)
    leave(vm, sh)
    poweroff(vm)
    boots_and_logs_in(c, f, disk, NEW_PASSWORD)


MISSING_UUID = '0d15ea5e-0000-4000-8000-00000000dead'


@test
def repair_fstab(c):
    """Repair 3: fstab names a disk that is gone; fixed from the rescue shell."""
    f = fixture(c, 'bios')
    disk = f.copy(c)
    fstab = debugfs(c, disk, f.layout, ['cat /etc/fstab'])
    broken = os.path.join(c.work, 'fstab')
    with open(broken, 'w') as fh:
        fh.write(fstab + 'UUID=%s /data ext4 defaults 0 2\n' % MISSING_UUID)
    debugfs(c, disk, f.layout, ['mkdir /data', 'rm /etc/fstab',
                                'write %s /etc/fstab' % broken])
    vm, sh = rescue_with_disk(c, disk)
    vm.type_line('rescue-enter')
    vm.wait(r'fstab line \d+: /data UUID=%s: no such device' % MISSING_UUID,
            'rescue-enter to name the missing disk', 60)
    vm.wait(CHROOT_PROMPT, 'the chroot prompt', 60)
    inner = Shell(vm, CHROOT_PROMPT)
    inner.run('stty cols 250', ok=False)
    inner.run("sed -i 's|^UUID=%s|#&|' /etc/fstab" % MISSING_UUID)
    inner.run('grep -n data /etc/fstab')
    leave(vm, sh)
    poweroff(vm)
    boots_and_logs_in(c, f, disk, f.layout['ROOT_PASSWORD'])


@test
def repair_initramfs(c):
    """Repair 4: the initramfs deleted from /boot; update-initramfs -c -k all."""
    f = fixture(c, 'bios')
    disk = f.copy(c)
    listing = debugfs(c, disk, f.layout, ['ls /boot'])
    initrd = re.search(r'initrd\.img-[^\s]+', listing)
    require(initrd, 'no initrd in the fixture\'s /boot: ' + listing)
    debugfs(c, disk, f.layout, ['rm /boot/' + initrd.group(0)])
    does_not_boot(c, disk, r'error: file `/boot/initrd\.img-[^\n]*not found',
                  'GRUB to miss the initramfs', 120)
    enter_and_run(c, disk, ['update-initramfs -c -k all', 'ls -l /boot/' + initrd.group(0)],
                  secs=INITRAMFS_TIMEOUT)
    boots_and_logs_in(c, f, disk, f.layout['ROOT_PASSWORD'])


def tiny_root(c, name, pretty, dirs=(), files=(), links=(), size='16M'):
    """A tiny installed root on a whole ext4 disk labelled `name`:
    /etc/os-release (PRETTY_NAME `pretty`) and /etc/fstab, plus `dirs`,
    `files` ((path, bytes) pairs) and symlinks ((path, target) pairs)."""
    tree = os.path.join(c.work, name)
    for d in ('etc',) + tuple(dirs):
        os.makedirs(os.path.join(tree, d))
    with open(os.path.join(tree, 'etc', 'os-release'), 'w') as f:
        f.write('PRETTY_NAME="%s"\nID=%s\nVERSION_ID=1\n' % (pretty, name))
    with open(os.path.join(tree, 'etc', 'fstab'), 'w') as f:
        f.write('LABEL=%s / ext4 defaults 0 1\n' % name)
    for rel, data in files:
        with open(os.path.join(tree, rel), 'wb') as f:
            f.write(data)
            os.fchmod(f.fileno(), 0o755 if data.startswith(b'\x7fELF') else 0o644)
    for rel, target in links:
        os.symlink(target, os.path.join(tree, rel))
    path = os.path.join(c.work, name + '.img')
    r = host(c, ['mke2fs', '-q', '-t', 'ext4', '-L', name, '-d', tree, path, size])
    require(r.returncode == 0, 'mke2fs of the tiny root %s failed' % name)
    return Disk(path)


def crash(c, disk):
    """Make the tiny root on disk look like a crashed machine's: its
    /orphan becomes an orphan inode (a file deleted while still open: its
    blocks are freed at the next read-write mount) and needs_recovery is
    set.  With debugfs, no kernel."""
    r = host(c, ['debugfs', '-R', 'stat /orphan', disk.path])
    m = re.search(r'^Inode: (\d+)', r.stdout, re.M)
    require(m, 'debugfs stat /orphan: %s' % (r.stdout + r.stderr)[-300:])
    script = disk.path + '.debugfs'
    with open(script, 'w') as f:
        f.write('unlink /orphan\nset_inode_field <{0}> links_count 0\n'
                'set_super_value last_orphan {0}\nfeature needs_recovery\n'.format(m.group(1)))
    host(c, ['debugfs', '-w', '-f', script, disk.path])
    r = host(c, ['dumpe2fs', '-h', disk.path])
    require('needs_recovery' in r.stdout and 'First orphan inode:       %s' % m.group(1)
            in r.stdout, 'the crashed ext4 lacks its orphan or needs_recovery: %s' % r.stdout)
    return disk


ORPHAN = ('orphan', os.urandom(200000))


def crashed_ext4(c):
    """A crashed machine's 64 MiB ext4 root ("Crashed Linux 1", a static
    busybox for its shell): one orphan inode, needs_recovery set."""
    with open('/bin/busybox', 'rb') as f:      # busybox-static
        busybox = f.read()
    return crash(c, tiny_root(c, 'crashed', 'Crashed Linux 1 (test)', size='64M',
                              dirs=('bin', 'proc', 'sys', 'dev', 'run', 'tmp'),
                              files=[ORPHAN, ('bin/busybox', busybox)],
                              links=[('bin/' + n, 'busybox') for n in ('sh', 'cat', 'touch')]))


def other_root(c):
    """A second installed root: "Other Linux 1", from a machine that
    crashed (crash()): looking at it must not clean it up."""
    return crash(c, tiny_root(c, 'other', 'Other Linux 1 (test)', files=[ORPHAN]))


def closed_luks(c):
    """A closed LUKS2 container (cryptsetup formats an image file)."""
    path = c.image('luks.img', 32)
    r = subprocess.run(['cryptsetup', 'luksFormat', '--type', 'luks2', '-q',
                        '--pbkdf', 'pbkdf2', '--pbkdf-force-iterations', '1000',
                        '--key-file', '-', path], input=b'secret', capture_output=True)
    require(r.returncode == 0, 'cryptsetup luksFormat failed: %s' % r.stderr)
    return Disk(path)


RO_PROMPT = r'\[chroot debian-12 sda1 ro\] [^\n#]*# '


@test
def enter_behaviour(c):
    """rescue-enter: finds and lists, asks, mounts, refuses, --ro, busy, killed."""
    f = fixture(c, 'bios')
    disk = f.copy(c)
    other, luks = other_root(c), closed_luks(c)
    sums = {d.path: sha256(d.path) for d in (other, luks)}
    vm, sh = rescue_with_disk(c, disk, hd(other, 2, unit=1, name='other') +
                              hd(luks, 3, bus='ide.1', unit=1, name='luks'))

    # Finding: both roots, the closed container and how to open it.
    out = sh.out('rescue-enter --list 2>&1')
    for want in (r'found 2 installed Linux systems',
                 r'/dev/sda1 +ext4 +Debian GNU/Linux 12 \(bookworm\)',
                 r'/dev/sdb +ext4 +Other Linux 1 \(test\)',
                 r'/dev/sdc +crypto_LUKS +cryptsetup open /dev/sdc sdc_crypt'):
        require(re.search(want, out), '--list lacks /%s/: %s' % (want, out))

    # Refusals.
    st, out = sh.run('rescue-enter /dev/sda5', ok=False)
    require(st == 1 and 'is not a Linux root' in out, 'swap entered? %s' % out)
    sh.run('mount -o ro /dev/sda1 /mnt')
    st, out = sh.run('rescue-enter sda1', ok=False)
    require(st == 1 and '/dev/sda1 is mounted at /mnt; unmount it first' in out, out)
    sh.run('umount /mnt')

    # Several roots: it asks; Ctrl-C there leaves nothing mounted.
    vm.type_line('rescue-enter')
    vm.wait(r'Which one\? Type its device', 'the question', 60)
    vm.send('\x03', label='Ctrl-C')
    vm.wait(qemu.PROMPT, 'the rescue prompt after Ctrl-C', 30)
    no_enter_mounts(sh)
    vm.type_line('rescue-enter')
    vm.wait(r'Which one\? Type its device', 'the question', 60)
    inner = enter(vm, 'sda1')

    # Inside: the kernel's filesystems, a fresh devtmpfs, TERM kept.
    out = inner.out('for m in / /proc /sys /dev /dev/pts /dev/shm /run; do '
                    'findmnt -rn -o TARGET,FSTYPE -M $m; done')
    for want in ('/ ext4', '/proc proc', '/sys sysfs', '/dev devtmpfs',
                 '/dev/pts devpts', '/dev/shm tmpfs', '/run tmpfs'):
        require(want in out.splitlines(), 'inside, findmnt lacks "%s": %s' % (want, out))
    require(inner.out('echo "TERM=$TERM"').strip() == 'TERM=vt100', 'TERM not kept')
    inner.run('ls -l /dev/sda1 /dev/ttyS0 /dev/null')
    # udev's names, from rescue-enter's probe, for the target's tools.
    link = inner.out('readlink /dev/disk/by-uuid/%s' % f.layout['ROOT_UUID']).strip()
    require(link == '../../sda1', '/dev/disk/by-uuid/<root> -> %r' % link)
    st, out = inner.run('/proc/1/root/sbin/rescue-enter', ok=False)
    require(st == 1 and 'already inside debian-12 /dev/sda1' in out, out)
    st, out = inner.run('env -u RESCUE_ENTER /proc/1/root/sbin/rescue-enter', ok=False)
    require(st == 1 and 'not running in the rescue system' in out, out)

    # A process still inside keeps the root busy: reported, the rest unmounted.
    inner.run('(cd /var/tmp && exec sleep 600) & true')
    vm.type_line('exit')
    m = vm.wait(r'rescue-enter: /run/rescue-enter/sda1 is busy, left mounted',
                'the busy root to be reported', 60)
    vm.wait(r'1 mount\(s\) left; once nothing uses them: umount /run/rescue-enter/sda1',
            'the command that finishes', 30)
    vm.wait(qemu.PROMPT, 'the rescue prompt', 30)
    done = vm.buf[:m.start()]
    for api in ('run', 'dev/shm', 'dev/pts', 'dev', 'sys', 'proc'):
        require('unmounted /run/rescue-enter/sda1/%s\n' % api in done,
                '/%s was not unmounted' % api)
    sh.run('kill $(pidof sleep); sleep 1; umount /run/rescue-enter/sda1')
    no_enter_mounts(sh)

    # The shell killed, rescue-enter hung up: all unmounted either way.
    inner = enter(vm, 'rescue-enter sda1')
    vm.type_line('kill -9 $$')
    vm.wait(r'left debian-12: its shell was killed by Killed; all unmounted',
            'rescue-enter to clean up after kill -9', 60)
    vm.wait(qemu.PROMPT, 'the rescue prompt', 30)
    no_enter_mounts(sh)
    inner = enter(vm, 'rescue-enter sda1')
    vm.type_line('kill -HUP $PPID')
    vm.wait(r'left debian-12: its shell was killed by Hangup; all unmounted',
            'rescue-enter to clean up after SIGHUP', 60)
    vm.wait(qemu.PROMPT, 'the rescue prompt', 30)
    no_enter_mounts(sh)

    # --ro: nothing can be written.
    inner = enter(vm, 'rescue-enter --ro sda1', prompt=RO_PROMPT)
    st, out = inner.run('touch /rescue-was-here', ok=False)
    require(st != 0 and 'Read-only file system' in out, 'touch worked under --ro: %s' % out)
    leave(vm, sh)
    st, out = sh.run('ls /dev/disk', ok=False)
    require(st != 0, 'the kernel\'s devtmpfs keeps a /dev/disk: %s' % out)
    poweroff(vm)

    for path, before in sums.items():
        require(sha256(path) == before, '%s changed: looking must not write' % path)
    fsck_clean(c, disk, f.layout)


CRASHED_PROMPT = r'\[chroot crashed-1 sda( ro)?\] [^\n#]*# '
# The dirty xfs and btrfs roots, as sdb and sdc.
DIRTY = {'sdb': ('xfs', 'Dirty XFS 1 (test)', 'dirtyxfs-1'),
         'sdc': ('btrfs', 'Dirty Btrfs 1 (test)', 'dirtybtrfs-1')}


def dirty_xfs_btrfs(c):
    """An xfs and a btrfs root, each left as a machine that lost power
    leaves it: a file fsync'ed last, which the xfs has only in its log
    (log dirty: mount replays it) and the btrfs only in its log tree
    (log_root set).  mkfs on the host; the roots filled and the power cut
    in one boot of the ISO (the host's kernel is not ours to use)."""
    xfs = Disk(c.image('dirtyxfs.img', 320))
    r = host(c, ['mkfs.xfs', '-q', '-L', 'dirtyxfs', xfs.path])
    require(r.returncode == 0, 'mkfs.xfs: %s' % r.stderr[-300:])
    btrfs = Disk(c.image('dirtybtrfs.img', 160))
    r = host(c, ['mkfs.btrfs', '-q', '-L', 'dirtybtrfs', btrfs.path])
    require(r.returncode == 0, 'mkfs.btrfs: %s' % r.stderr[-300:])
    vm, sh = rescue_with_disk(c, xfs, hd(btrfs, 2, unit=1, name='hd2'))
    for dev, (fstype, pretty, tag) in (('sda', DIRTY['sdb']), ('sdb', DIRTY['sdc'])):
        name, version = tag.rsplit('-', 1)
        sh.run('mkdir -p /tmp/t/{0} && mount -t {1} /dev/{0} /tmp/t/{0} && cd /tmp/t/{0} && '
               'mkdir etc bin proc sys dev run tmp && cp /bin/busybox bin/ && '
               'for n in sh cat touch; do ln -s busybox bin/$n; done && '
               'printf \'PRETTY_NAME="{2}"\\nID={3}\\nVERSION_ID={4}\\n\' >etc/os-release && '
               'echo "LABEL={3} / {1} defaults 0 1" >etc/fstab && cd / && '
               # Unmounted cleanly, so that the root is in place, not only
               # in the log (a look replays nothing).
               'umount /tmp/t/{0} && mount -t {1} /dev/{0} /tmp/t/{0}'
               .format(dev, fstype, pretty, name, version))
    # Last, after every commit: a file only the log holds, fsync'ed.
    sh.run('for d in sda sdb; do head -c 100000 /dev/urandom >/tmp/t/$d/last && '
           'sync /tmp/t/$d/last; done')
    vm.stop()       # the power cut: no unmount
    r = host(c, ['xfs_repair', '-n', xfs.path])
    require('log' in r.stdout + r.stderr and r.returncode != 0,
            'the xfs log is not dirty (xfs_repair -n: %s)' % (r.stdout + r.stderr)[-300:])
    r = host(c, ['btrfs', 'inspect-internal', 'dump-super', btrfs.path])
    m = re.search(r'^log_root\s+(\d+)', r.stdout, re.M)
    require(m and m.group(1) != '0', 'the btrfs has no log tree: %s' % r.stdout[-600:])
    return xfs, btrfs


def dirty_roots(c):
    """The three roots a look must leave alone, by the name each has in
    rescue_with_dirty_roots(): sda the crashed ext4, sdb the dirty xfs,
    sdc the btrfs with a log tree."""
    disks = {'sda': crashed_ext4(c)}
    disks['sdb'], disks['sdc'] = dirty_xfs_btrfs(c)
    return disks


def rescue_with_dirty_roots(c, disks):
    return rescue_with_disk(c, disks['sda'], hd(disks['sdb'], 2, unit=1, name='hd2') +
                            hd(disks['sdc'], 3, bus='ide.1', unit=1, name='hd3'))


def read_only_flags(sh, disks):
    """blockdev --getro of each disk, in name order ("0": writable)."""
    return sh.out('for d in %s; do blockdev --getro /dev/$d; done'
                  % ' '.join(sorted(disks))).split()


@test
def looking_never_writes(c):
    """A crashed ext4 (an orphan inode, needs_recovery), an xfs with a
    dirty log and a btrfs with a log tree stay bit-identical through the
    banner, rescue-enter --list, a rescue-enter --ro session in each and
    rescue-boot answered no, and each device's read-only flag is put back;
    entering each without --ro then replays it, as the user asked, and its
    fsck is clean."""
    disks = dirty_roots(c)
    before = {dev: sha256(d.path) for dev, d in disks.items()}
    vm, sh = rescue_with_dirty_roots(c, disks)
    prompt = {'sda': CRASHED_PROMPT}
    prompt.update((dev, r'\[chroot %s %s( ro)?\] [^\n#]*# ' % (tag, dev))
                  for dev, (_, _, tag) in DIRTY.items())

    def unchanged(after):
        for dev in sorted(disks):
            out = sh.out('sha256sum /dev/%s' % dev, secs=300)
            require(out.split()[0] == before[dev],
                    '/dev/%s changed by %s: looking must not write' % (dev, after))
        ro = read_only_flags(sh, disks)
        require(ro == ['0'] * len(disks), 'after %s, read-only flags %s (%s)'
                % (after, ' '.join(ro), ' '.join(sorted(disks))))
        no_enter_mounts(sh)

    def session(cmd, dev):
        inner = enter(vm, cmd, prompt=prompt[dev])
        require('PRETTY_NAME' in inner.out('cat /etc/os-release'), 'not inside %s' % dev)
        if '--ro' in cmd:
            st, out = inner.run('touch /rescue-was-here', ok=False)
            require(st != 0 and 'Read-only file system' in out,
                    'touch worked under --ro on %s: %s' % (dev, out))
        vm.type_line('exit')
        vm.wait(r'rescue-enter: left [\w.-]+; all unmounted', 'rescue-enter to unmount all', 60)
        vm.wait(qemu.PROMPT, 'the rescue prompt', 30)

    unchanged('the boot and the banner')
    out = sh.out('rescue-enter --list 2>&1')
    for want in (r'/dev/sda +ext4 +Crashed Linux 1 \(test\)',
                 r'/dev/sdb +xfs +Dirty XFS 1 \(test\)',
                 r'/dev/sdc +btrfs +Dirty Btrfs 1 \(test\)'):
        require(re.search(want, out), '--list lacks /%s/: %s' % (want, out))
    unchanged('rescue-enter --list')
    for dev in sorted(disks):
        session('rescue-enter --ro %s' % dev, dev)
        unchanged('a rescue-enter --ro session on /dev/%s' % dev)
    vm.type_line('rescue-boot sda')
    vm.wait(r'Boot Crashed Linux 1 \(test\) on /dev/sda with the rescue kernel\?[^\n]*\[y/N\] ',
            'rescue-boot\'s question', 60)
    vm.type_line('n')
    vm.wait(r'rescue-boot: nothing done', 'rescue-boot to do nothing', 30)
    vm.wait(qemu.PROMPT, 'the rescue prompt', 30)
    unchanged('rescue-boot answered no')

    # Asked to change them: each is replayed, or its orphan cleaned up.
    for dev in sorted(disks):
        session('rescue-enter --rw %s' % dev, dev)
    poweroff(vm)
    r = host(c, ['dumpe2fs', '-h', disks['sda'].path])
    require('First orphan inode' not in r.stdout,
            'rescue-enter (read-write) left the orphan inode: %s' % r.stdout[-400:])
    for what, cmd in (('e2fsck -fn', ['e2fsck', '-fn', disks['sda'].path]),
                      ('xfs_repair -n', ['xfs_repair', '-n', disks['sdb'].path]),
                      ('btrfs check', ['btrfs', 'check', disks['sdc'].path])):
        r = host(c, cmd)
        require(r.returncode == 0, '%s after the read-write enter: status %d: %s'
                % (what, r.returncode, (r.stdout + r.stderr).strip()[-300:]))
    r = host(c, ['btrfs', 'inspect-internal', 'dump-super', disks['sdc'].path])
    require(re.search(r'^log_root\s+0$', r.stdout, re.M),
            'the btrfs log tree was not replayed: %s' % r.stdout[-600:])


@test
def interrupted_looks_leave_nothing(c):
    """SIGINT at a random moment of a look (rescue-enter --list, and
    rescue-boot looking before its question), 20 times over the crashed
    ext4, the dirty xfs and the btrfs: each time nothing of the disks
    stays mounted, no device stays read-only, and the next rescue-enter
    --list finds all three."""
    disks = dirty_roots(c)
    vm, sh = rescue_with_dirty_roots(c, disks)
    # How long one look of each program takes here: the shortest of five
    # timed with busybox's `time`, after two that warm the caches (the
    # first looks read the disks).  The signal comes within the first 80%
    # of it: on a loaded machine a look is sometimes faster than the
    # shortest one timed.
    look_us = {}
    for prog in ('rescue-enter --list', 'rescue-boot sda </dev/null'):
        out = sh.out('%s >/dev/null 2>&1; %s >/dev/null 2>&1; for i in 1 2 3 4 5; do '
                     'time %s 2>&1 >/dev/null; done' % (prog, prog, prog), ok=False)
        times = [int((int(m) * 60 + float(sec)) * 1e6)
                 for m, sec in re.findall(r'real\s+(\d+)m\s*([\d.]+)s', out)]
        require(len(times) == 5, 'no times for %s: %s' % (prog, out))
        look_us[prog] = min(times)
    rng = random.Random(33)
    killed = 0
    for i in range(20):
        prog = 'rescue-enter --list' if i % 2 == 0 else 'rescue-boot sda </dev/null'
        delay = rng.randrange(0, max(look_us[prog] * 4 // 5, 1000))
        out = sh.out('%s >/tmp/look.out 2>&1 & p=$!; usleep %d; '
                     'sed -n "s/^SigIgn:/ignored/p" /proc/$p/status; kill -INT $p 2>/dev/null; '
                     'wait $p; echo "status $?"' % (prog, delay), ok=False)
        ign = re.search(r'ignored\s+([0-9a-f]+)', out)
        require(not ign or not int(ign.group(1), 16) & 2,
                'the shell started %s with SIGINT ignored: this test would prove nothing' % prog)
        killed += 'status 130' in out
        left = sh.out('grep "^/dev/sd" /proc/mounts', ok=False).strip()
        require(not left, 'SIGINT after %d us of `%s` left mounted: %s' % (delay, prog, left))
        ro = read_only_flags(sh, disks)
        require(ro == ['0'] * len(disks), 'SIGINT after %d us of `%s` left read-only flags %s '
                '(%s)' % (delay, prog, ' '.join(ro), ' '.join(sorted(disks))))
    vm.note('%d of 20 runs were stopped by the SIGINT (a look takes %s us)' % (killed, look_us))
    require(killed >= 5, 'only %d of 20 runs were still looking when SIGINT came: '
            'this test would prove nothing' % killed)
    out = sh.out('rescue-enter --list 2>&1')
    require('found 3 installed Linux systems' in out, 'the next --list: %s' % out)
    poweroff(vm)



if __name__ == '__main__':
    sys.exit(main(__doc__))
