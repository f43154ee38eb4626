#!/usr/bin/python3
"""Storage tests: the ISO opens LUKS, LVM and md RAID, and checks every
filesystem the kernel mounts, with /dev from devtmpfs and no udev.

The host has no device-mapper and no md, so the fixture disks are made
inside QEMU by booting this ISO (make_fixtures, one boot), and cached under
RESCUE_CACHE/fixtures/storage-<key>/ (tests/fixture_cache.py), where the key
is a hash of the fixture code and of the ISO's package manifest
(/usr/share/rescue/packages: the tool versions). Tests never change the cache: they boot on qcow2 overlays, or on
raw copies whose sha256 they compare.

    tests/storage.py --iso build/rescue.iso --logdir build/test-logs [TEST...]

The machine, console and runner are in qemu.py.
"""

import hashlib
import inspect
import os
import re
import subprocess
import sys

import fixture_cache
from qemu import (BAD, CMD_TIMEOUT, Fail, Shell, boot_rescue, host, main, menu,
                  poweroff, require, sha256, test)

PASSPHRASE = 'correct horse battery staple'
WRONG_PASSPHRASE = 'incorrect horse'
# LUKS2's Argon2id takes up to half the memory by default: give it room.
MEM = 1024
# A command that formats or encrypts can take long under TCG.
SLOW = 600

# Fixture disks: file name -> size in MiB, in the order QEMU attaches them
# (virtio: vda, vdb, ...).
FIXTURE_DISKS = [
    ('luks2-lvm.img', 600),     # vda: Debian's guided encrypted LVM
    ('luks1.img', 64),          # vdb: an older installer's LUKS1
    ('raid-a.img', 160),        # vdc: md RAID1 member 1, btrfs
    ('raid-b.img', 160),        # vdd: md RAID1 member 2
    ('thin.img', 128),          # vde: LVM thin pool, thin LV, snapshot
    ('other-array.img', 64),    # vdf: a member of another md array
]

# Any of these on the console while LVM, cryptsetup or mdadm work means
# they tried to use udev.
UDEV_BAD = [('udev warning', r'[^\n]*[Uu]dev[^\n]*')]


def make_fixtures(sh):
    """The guest-side commands that make every fixture disk (one boot)."""
    run = lambda cmd, secs=SLOW: sh.run(cmd, secs=secs, bad=BAD + UDEV_BAD)
    run("printf %s '" + PASSPHRASE + "' >/tmp/key")
    # 1. GPT: ESP, /boot ext4, LUKS2 (default: argon2id) -> vg0 -> root, data.
    run('sgdisk -o -n1:0:+32M -t1:ef00 -n2:0:+64M -t2:8300 -n3:0:0 -t3:8309 /dev/vda')
    run('mkfs.fat -n EFI /dev/vda1')
    run('mke2fs -q -t ext4 -L boot /dev/vda2')
    run('mount /dev/vda2 /mnt && echo boot-known >/mnt/known && umount /mnt')
    run('cryptsetup luksFormat --batch-mode --type luks2 --key-file /tmp/key /dev/vda3')
    run('cryptsetup open --key-file /tmp/key /dev/vda3 cryptroot')
    run('pvcreate /dev/mapper/cryptroot && vgcreate vg0 /dev/mapper/cryptroot')
    run('lvcreate -L 128M -n root vg0 && lvcreate -l 100%FREE -n data vg0')
    run('mke2fs -q -t ext4 /dev/vg0/root && mkfs.xfs -q /dev/vg0/data')
    run('mount /dev/vg0/root /mnt && echo root-known >/mnt/known && umount /mnt')
    run('mount /dev/vg0/data /mnt && echo data-known >/mnt/known && umount /mnt')
    run('vgchange -an vg0 && cryptsetup close cryptroot')
    # 2. LUKS1 with ext4.
    run('cryptsetup luksFormat --batch-mode --type luks1 --key-file /tmp/key /dev/vdb')
    run('cryptsetup open --key-file /tmp/key /dev/vdb old')
    run('mke2fs -q -t ext4 /dev/mapper/old')
    run('mount /dev/mapper/old /mnt && echo luks1-known >/mnt/known && umount /mnt')
    run('cryptsetup close old')
    # 3. md RAID1 over two disks, btrfs on it.
    run('mdadm --create /dev/md0 --run --level=1 --raid-devices=2 --metadata=1.2 '
        '--assume-clean --name=data /dev/vdc /dev/vdd')
    run('mkfs.btrfs -q /dev/md0')
    run('mount /dev/md0 /mnt && echo raid-known >/mnt/known && umount /mnt')
    run('mdadm --stop /dev/md0')
    # 4. LVM thin pool, a thin LV, and a thin snapshot of it; the LV
    # changes after the snapshot.
    run('pvcreate /dev/vde && vgcreate vgthin /dev/vde')
    run('lvcreate --type thin-pool -L 48M -n pool vgthin')
    run('lvcreate -V 64M -T vgthin/pool -n thin')
    run('mke2fs -q -t ext4 /dev/vgthin/thin')
    run('mount /dev/vgthin/thin /mnt && echo v1 >/mnt/known && umount /mnt')
    run('lvcreate -s -n snap vgthin/thin')
    run('mount /dev/vgthin/thin /mnt && echo v2 >/mnt/known && umount /mnt')
    run('vgchange -an vgthin')
    # 5. A member of another array (RAID1, its second disk missing).
    run('mdadm --create /dev/md1 --run --level=1 --raid-devices=2 --metadata=1.2 '
        '--name=other /dev/vdf missing')
    run('mdadm --stop /dev/md1')
    run('sync')


def fixture_key(c):
    """Hash of what makes the fixtures: the code above and the tool versions."""
    r = subprocess.run(['xorriso', '-osirrox', 'on', '-indev', c.iso, '-extract',
                        '/usr/share/rescue/packages', os.path.join(c.work, 'packages')],
                       capture_output=True, text=True)
    require(r.returncode == 0, 'the ISO has no /usr/share/rescue/packages: '
            + r.stderr.strip()[-200:])
    h = hashlib.sha256()
    h.update(inspect.getsource(make_fixtures).encode())
    h.update(repr(FIXTURE_DISKS).encode())
    with open(os.path.join(c.work, 'packages'), 'rb') as f:
        h.update(f.read())
    return h.hexdigest()[:16]


ENTRIES = {}


def fixtures(c):
    """The fixture directory (tests/fixture_cache.py), made by booting the
    ISO once if it is not cached or not as it was made."""
    key = fixture_key(c)
    if key not in ENTRIES:
        ENTRIES[key] = fixture_cache.Entry(
            os.path.join(os.path.dirname(c.iso), 'fixtures'), 'storage', key)

    def build(tmp):
        disks = []
        for name, mib in FIXTURE_DISKS:
            path = os.path.join(tmp, name)
            with open(path, 'wb') as f:
                f.truncate(mib << 20)
            disks += ['-drive', 'if=virtio,format=raw,file=' + path]
        vm = c.machine(c.cdrom() + disks, mem=MEM)
        menu(vm, 'rescue', default=True)
        sh = boot_rescue(vm)
        make_fixtures(sh)
        poweroff(vm)
    return ENTRIES[key].get(build, c.log)


def overlay(c, fixture_dir, name):
    """A qcow2 overlay on a fixture disk: the test writes, the cache stays."""
    path = os.path.join(c.work, name + '.qcow2')
    r = host(c, ['qemu-img', 'create', '-q', '-f', 'qcow2', '-F', 'raw', '-b',
                 os.path.join(fixture_dir, name), path])
    require(r.returncode == 0, 'qemu-img create failed: ' + r.stderr.strip())
    return ['-drive', 'if=virtio,format=qcow2,file=' + path]


def raw_copy(c, fixture_dir, name):
    """A raw copy of a fixture disk (for sha256 before and after)."""
    path = os.path.join(c.work, name)
    subprocess.run(['cp', '--sparse=always', os.path.join(fixture_dir, name), path],
                   check=True)
    return path


def boot(c, disks):
    vm = c.machine(c.cdrom() + disks, mem=MEM)
    menu(vm, 'rescue', default=True)
    return vm, boot_rescue(vm)


def run(sh, cmd, secs=SLOW, ok=True):
    """A command that must not complain about udev."""
    return sh.run(cmd, secs=secs, ok=ok, bad=BAD + UDEV_BAD)


def open_luks(sh, dev, name, passphrase=PASSPHRASE, ok=True, extra=''):
    """`cryptsetup open` with the passphrase typed at its prompt, which
    must not echo it. Returns (status, what the console showed)."""
    vm = sh.vm
    vm.commands += 1
    mark = '@@%d@@' % vm.commands
    vm.type_line('cryptsetup open %s%s %s; echo %s$?@@' % (extra, dev, name, mark))
    vm.wait(r'Enter passphrase for %s: ' % re.escape(dev), "cryptsetup's prompt", SLOW)
    start = len(vm.buf)
    vm.send(passphrase + '\r', label='(the passphrase)')
    m = vm.wait(re.escape(mark) + r'(\d+)@@', 'cryptsetup to finish', SLOW,
                bad=BAD + UDEV_BAD)
    shown = vm.buf[start:m.start()]
    vm.wait(sh.prompt, 'the prompt', CMD_TIMEOUT)
    require(passphrase not in shown, 'the passphrase was echoed on the console')
    status = int(m.group(1))
    if ok:
        require(status == 0, 'cryptsetup open %s failed (%d): %s' % (dev, status, shown.strip()))
    return status, shown


def read_known(sh, dev, want, opts='ro'):
    run(sh, 'mount -o %s %s /mnt' % (opts, dev))
    got = sh.out('cat /mnt/known').strip()
    run(sh, 'umount /mnt')
    require(got == want, '%s holds %r, not %r' % (dev, got, want))


def nothing_active(sh):
    """Nothing is activated or assembled until the user asks."""
    mapper = sh.out('ls /dev/mapper').split()
    require(mapper == ['control'], 'device-mapper devices before anyone asked: %s' % mapper)
    mdstat = sh.out('cat /proc/mdstat')
    require(not re.search(r'^md\d+ :', mdstat, re.M),
            'md arrays before anyone asked: %s' % mdstat.strip())


# ---------------------------------------------------------------------------

@test
def luks2_lvm(c):
    """Debian's guided encrypted LVM: open, activate, check, write, close; the next boot finds it."""
    fx = fixtures(c)
    disk = overlay(c, fx, 'luks2-lvm.img')
    vm, sh = boot(c, disk)
    nothing_active(sh)
    open_luks(sh, '/dev/vda3', 'cryptroot')
    out = run(sh, 'vgchange -ay vg0')[1]
    require('2 logical volume(s) in volume group "vg0" now active' in out,
            'vgchange did not activate vg0: ' + out.strip())
    ls = sh.out('ls -l /dev/dm-* /dev/vg0/ /dev/mapper/')
    for want in ('root ->', 'data ->', 'vg0-root', 'vg0-data', 'cryptroot'):
        require(want in ls, '%r missing from /dev/vg0, /dev/mapper: %s' % (want, ls))
    run(sh, 'fsck.fat -n /dev/vda1')
    run(sh, 'e2fsck -n /dev/vda2')
    run(sh, 'e2fsck -n /dev/vg0/root')
    run(sh, 'xfs_repair -n /dev/vg0/data')
    read_known(sh, '/dev/vda2', 'boot-known')
    read_known(sh, '/dev/vg0/data', 'data-known')
    read_known(sh, '/dev/vg0/root', 'root-known')
    run(sh, 'mount /dev/vg0/root /mnt && echo written-in-rescue >/mnt/rescued && umount /mnt')
    run(sh, 'vgchange -an vg0')
    run(sh, 'cryptsetup close cryptroot')
    require(sh.out('ls /dev/mapper').split() == ['control'], 'mappings left after closing')
    poweroff(vm)

    vm, sh = boot(c, disk)
    open_luks(sh, '/dev/vda3', 'cryptroot')
    run(sh, 'vgchange -ay vg0')
    run(sh, 'mount -o ro /dev/vg0/root /mnt')
    got = sh.out('cat /mnt/rescued').strip()
    require(got == 'written-in-rescue', 'the file written last boot holds %r' % got)
    run(sh, 'umount /mnt && vgchange -an vg0 && cryptsetup close cryptroot')
    poweroff(vm)


@test
def luks1(c):
    """LUKS1 from an older installer: open at the prompt, check, read."""
    fx = fixtures(c)
    vm, sh = boot(c, overlay(c, fx, 'luks1.img'))
    open_luks(sh, '/dev/vda', 'old')
    require('LUKS1' in sh.out('cryptsetup status old'), 'cryptsetup status does not say LUKS1')
    run(sh, 'e2fsck -n /dev/mapper/old')
    read_known(sh, '/dev/mapper/old', 'luks1-known')
    run(sh, 'cryptsetup close old')
    poweroff(vm)


def write_zstd(sh, dev):
    """Writes through btrfs's zstd compression (its workspaces are
    allocated at the first mount, patches/0004) read back intact."""
    size = 4 << 20
    want = hashlib.md5((b'rescue\n' * (size // 7 + 1))[:size]).hexdigest()
    run(sh, 'mount -o compress-force=zstd:15 %s /mnt' % dev)
    run(sh, 'yes rescue | head -c %d >/mnt/zstd && umount /mnt' % size)
    zstd = sh.out("btrfs inspect-internal dump-tree -t fs %s | grep -c 'extent compression 3 (zstd)' || true" % dev)
    require(int(zstd.split()[0]) > 0, 'btrfs wrote no zstd-compressed extent')
    run(sh, 'mount -o ro %s /mnt' % dev)
    got = sh.out('md5sum </mnt/zstd').split()[0]
    run(sh, 'umount /mnt')
    require(got == want, '/mnt/zstd reads back as md5 %s, not %s' % (got, want))
    require(not sh.out('dmesg | grep -i "btrfs.*preallocate" || true').strip(),
            'btrfs could not preallocate a compression workspace')


@test
def raid1_btrfs(c):
    """md RAID1 with btrfs: assemble, check, mount; then degraded on one disk."""
    fx = fixtures(c)
    a, b = overlay(c, fx, 'raid-a.img'), overlay(c, fx, 'raid-b.img')
    vm, sh = boot(c, a + b)
    nothing_active(sh)
    out = run(sh, 'mdadm --assemble --scan')[1]
    require(re.search(r'/dev/md/?\S* has been started with 2 drives', out),
            'mdadm did not start the array with both disks: ' + out.strip())
    md = sh.out("ls /dev/md/").split()
    require(md, '/dev/md/ is empty after assembly')
    dev = '/dev/md/' + md[0]
    run(sh, 'btrfs check --readonly ' + dev)
    read_known(sh, dev, 'raid-known')
    write_zstd(sh, dev)
    run(sh, 'mdadm --stop ' + dev)
    poweroff(vm)

    vm, sh = boot(c, a)
    out = run(sh, 'mdadm --assemble --scan')[1]
    require(re.search(r'has been started with 1 drive \(out of 2\)', out),
            'mdadm did not start the array degraded: ' + out.strip())
    require(re.search(r'\[2/1\]', sh.out('cat /proc/mdstat')), '/proc/mdstat does not show [2/1]')
    read_known(sh, dev, 'raid-known')
    run(sh, 'mdadm --stop ' + dev)
    poweroff(vm)


@test
def lvm_thin(c):
    """LVM thin pool: activate, the thin LV and its snapshot differ as written."""
    fx = fixtures(c)
    vm, sh = boot(c, overlay(c, fx, 'thin.img'))
    run(sh, 'vgchange -ay vgthin')
    lvs = sh.out('lvs --noheadings -o lv_name,lv_attr vgthin')
    for lv in ('pool', 'thin', 'snap'):
        require(re.search(r'^\s*%s\s' % lv, lvs, re.M), 'lvs lacks %s: %s' % (lv, lvs))
    # Thin snapshots are skipped by plain activation (-k); -K activates.
    run(sh, 'lvchange -ay -K vgthin/snap')
    run(sh, 'e2fsck -n /dev/vgthin/thin && e2fsck -n /dev/vgthin/snap')
    read_known(sh, '/dev/vgthin/thin', 'v2')
    read_known(sh, '/dev/vgthin/snap', 'v1')
    run(sh, 'vgchange -an vgthin')
    poweroff(vm)


@test
def bad_input(c):
    """Wrong passphrase, corrupted LVM metadata, a foreign md member: clear errors, nothing written."""
    fx = fixtures(c)
    luks = raw_copy(c, fx, 'luks1.img')
    thin = raw_copy(c, fx, 'thin.img')
    member = raw_copy(c, fx, 'raid-a.img')
    other = raw_copy(c, fx, 'other-array.img')
    # The metadata area follows the label: LVM keeps its text at 4 KiB +
    # 512 (mda header) onwards; overwrite the header and the text start.
    with open(thin, 'r+b') as f:
        f.seek(4096)
        f.write(b'\xa5' * 8192)
    before = {p: sha256(p) for p in (luks, thin, member, other)}
    disks = []
    for p in (luks, thin, member, other):     # vda vdb vdc vdd
        disks += ['-drive', 'if=virtio,format=raw,file=' + p]
    vm, sh = boot(c, disks)
    status, shown = open_luks(sh, '/dev/vda', 'x', WRONG_PASSPHRASE, ok=False,
                              extra='--tries 1 ')
    require(status != 0, 'cryptsetup accepted a wrong passphrase')
    require('No key available with this passphrase' in shown,
            'no clear message for a wrong passphrase: ' + shown.strip())
    status, out = run(sh, 'vgchange -ay vgthin', ok=False)
    require(status != 0, 'vgchange succeeded on corrupted metadata: ' + out)
    require(re.search(r'Volume group "vgthin" not found|metadata', out),
            'no clear message for corrupted metadata: ' + out.strip())
    status, out = run(sh, 'mdadm --assemble /dev/md9 /dev/vdc /dev/vdd', ok=False)
    require(status != 0, 'mdadm assembled members of two arrays: ' + out)
    require(re.search(r"doesn't match others|wrong uuid|not.*same array", out, re.I),
            'no clear message for a foreign member: ' + out.strip())
    require(sh.out('ls /dev/mapper').split() == ['control'], 'a mapping was left behind')
    poweroff(vm)
    for p, h in before.items():
        require(sha256(p) == h, '%s was written to' % os.path.basename(p))


@test
def other_filesystems(c):
    """fsck.fat, fsck.exfat, ntfsfix on host-made images; full tools beat busybox applets."""
    imgs = []
    for name, mkfs in (('fat.img', ['mkfs.vfat', '-n', 'HOSTFAT']),
                       ('exfat.img', ['mkfs.exfat', '-L', 'HOSTEXFAT']),
                       ('ntfs.img', ['mkntfs', '-F', '-Q', '-L', 'HOSTNTFS'])):
        path = c.image(name, 64)
        r = host(c, mkfs + [path])
        require(r.returncode == 0, '%s failed on the host: %s' % (mkfs[0], r.stderr.strip()))
        imgs.append(path)
    scratch = c.image('scratch.img', 64)
    before = {p: sha256(p) for p in imgs}
    disks = []
    for p in imgs + [scratch]:      # vda vdb vdc vdd
        disks += ['-drive', 'if=virtio,format=raw,file=' + p]
    vm, sh = boot(c, disks)
    run(sh, 'fsck.fat -n /dev/vda')
    run(sh, 'fsck.exfat -n /dev/vdb')
    out = run(sh, 'ntfsfix -n /dev/vdc')[1]
    require('NTFS partition /dev/vdc was processed successfully' in out or 'successfully' in out,
            'ntfsfix did not finish: ' + out.strip())
    # Typing a name that busybox also has runs the full program.
    for name, version in (('mke2fs', 'mke2fs 1.47'), ('fdisk', 'util-linux')):
        out = sh.out('%s -V 2>&1' % name, ok=False)
        require(version in out, '`%s -V` ran busybox, not the full program: %s' % (name, out.strip()))
    run(sh, 'mke2fs -q -t ext4 /dev/vdd')
    run(sh, 'e2fsck -fn /dev/vdd')
    out = sh.out('blkid /dev/vda /dev/vdb /dev/vdc /dev/vdd')
    for want in ('HOSTFAT', 'HOSTEXFAT', 'HOSTNTFS', 'TYPE="ext4"'):
        require(want in out, 'blkid does not show %s: %s' % (want, out.strip()))
    poweroff(vm)
    for p, h in before.items():
        require(sha256(p) == h, '%s was written to by a check' % os.path.basename(p))


@test
def every_tool_runs(c):
    """Every program of image/tools.list starts on the ISO (its libraries are there)."""
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    progs = []
    with open(os.path.join(top, 'image', 'tools.list')) as f:
        for line in f:
            if line.strip() and not line.startswith('#'):
                progs.append(line.split()[0])
    vm, sh = boot(c, [])
    bad = []
    for p in progs:
        # The loader lists what it would load, "not found" for a missing
        # library; then the program must start and print its usage.
        out = sh.out('/lib64/ld-linux-x86-64.so.2 --list %s 2>&1' % p, ok=False)
        out += sh.out('%s --help </dev/null 2>&1 | head -3' % p, ok=False)
        if re.search(r'error while loading shared libraries|not found|No such file', out):
            bad.append('%s: %s' % (p, out.strip()))
    require(not bad, 'programs that do not start: ' + '; '.join(bad))
    poweroff(vm)


@test
def banner(c):
    """The boot banner names each stack on the fixture disks, and nothing is activated."""
    fx = fixtures(c)
    disks = []
    for name in ('luks2-lvm.img', 'raid-a.img', 'raid-b.img', 'thin.img', 'luks1.img'):
        disks += overlay(c, fx, name)          # vda vdb vdc vdd vde
    vm, sh = boot(c, disks)
    want = [
        r'rescue-init: vda3: LUKS2 \(cryptsetup open /dev/vda3 NAME\)',
        r'rescue-init: vdb: md member of (md/)?(\S+:)?data \(mdadm --assemble --scan\)',
        r'rescue-init: vdc: md member of (md/)?(\S+:)?data \(mdadm --assemble --scan\)',
        r'rescue-init: vdd: LVM PV of vgthin \(vgchange -ay vgthin\)',
        r'rescue-init: vde: LUKS1 \(cryptsetup open /dev/vde NAME\)',
    ]
    missing = [w for w in want if not re.search(w, vm.buf)]
    require(not missing, 'the banner lacks: %s' % missing)
    for part in ('vda1', 'vda2'):       # plain filesystems are no stack
        require(not re.search(r'rescue-init: %s: (LUKS|md member|LVM)' % part, vm.buf),
                'the banner calls %s a stack' % part)
    nothing_active(sh)
    poweroff(vm)


if __name__ == '__main__':
    sys.exit(main(__doc__))
