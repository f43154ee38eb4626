#!/usr/bin/python3
"""Driver tests: the devices whose drivers ship as modules work with
nothing typed, and the kernel loads only modules signed with the
builder's key.

rescue-init loads the modules for every device's sysfs modalias (kmod's
modprobe, in a child of PID 1); the nodes still come from devtmpfs.  The
disks are made on the host (mke2fs); the module copies signed with a
throwaway key, or not signed at all, too, from the ISO's own module.

    tests/drivers.py --iso build/rescue.iso --logdir build/test-logs [TEST...]

The machine, console and runner are in qemu.py.
"""

import os
import re
import struct
import subprocess
import sys

from qemu import (BOOT_TIMEOUT, Fail, boot_line, boot_rescue, host, main, menu,
                  poweroff, require, test)

# The console line rescue-init's module loader prints when it loaded
# modules: for the devices present at boot, or for a new device.
# (the whole line: a wait must not match it half-written).
DRIVERS_LOADED = r'rescue-init: drivers: loaded (\d+) modules %s in (\d+) ms: ([^\n]*)\n'
AT_BOOT = 'for the devices present'
NEW_DEVICE = 'for a new device'

# scripts/sign-file's trailer: struct module_signature, then the magic.
SIG_MAGIC = b'~Module signature appended~\n'
PKEY_ID_PKCS7 = 2


def ext4_disk(c, name, label, mib=16):
    """A small ext4 image with `label`, made on the host."""
    path = c.image(name, mib)
    r = host(c, ['mke2fs', '-q', '-F', '-t', 'ext4', '-L', label, path])
    require(r.returncode == 0, 'mke2fs %s failed: %s' % (name, r.stderr.strip()))
    return path


def wait_since(vm, pattern, what, since, secs):
    """The first match of `pattern` on the console after offset `since`:
    a line of init's may come before a command's answer, or after."""
    m = re.compile(pattern).search(vm.buf, since)
    return m or vm.wait(pattern, what, secs)


def wait_drivers(vm, why, secs=60, since=0):
    """The module loader's report `why` (AT_BOOT, NEW_DEVICE) after
    offset `since`: the names of the modules it says it loaded."""
    m = wait_since(vm, DRIVERS_LOADED % re.escape(why),
                   'the init\'s "drivers: loaded ... %s" line' % why, since, secs)
    return set(re.split(r',\s*', m.group(3).strip()))


@test
def coldplug(c):
    """megasas and pvscsi disks, vmxnet3 and USB (usb-net) NICs: their
    modules load with nothing typed; each disk's label shows in blkid, each
    NIC gets a DHCP lease."""
    mega = ext4_disk(c, 'megasas.img', 'ON-MEGASAS')
    pv = ext4_disk(c, 'pvscsi.img', 'ON-PVSCSI')
    devices = c.cdrom() + [
        '-device', 'megasas,id=mega',
        '-drive', 'if=none,id=dmega,format=raw,file=' + mega,
        '-device', 'scsi-hd,bus=mega.0,drive=dmega',
        '-device', 'pvscsi,id=pv',
        '-drive', 'if=none,id=dpv,format=raw,file=' + pv,
        '-device', 'scsi-hd,bus=pv.0,drive=dpv',
        '-netdev', 'user,id=nvmx', '-device', 'vmxnet3,netdev=nvmx',
        '-device', 'qemu-xhci,id=xhci',
        '-netdev', 'user,id=nusb', '-device', 'usb-net,netdev=nusb,bus=xhci.0']
    vm = c.machine(devices)
    menu(vm, 'rescue')
    sh = boot_rescue(vm)
    loaded = wait_drivers(vm, AT_BOOT)
    for module in ('megaraid_sas', 'vmw_pvscsi', 'vmxnet3', 'usbnet'):
        require(module in loaded, 'the init did not load %s: it says %s'
                % (module, ', '.join(sorted(loaded))))
    require(sh.run("grep -q ' /dev devtmpfs ' /proc/mounts", ok=False)[0] == 0,
            '/dev is not devtmpfs')
    for label in ('ON-MEGASAS', 'ON-PVSCSI'):
        dev = sh.out('blkid -L %s' % label).strip()
        require(re.fullmatch(r'/dev/sd[a-z]+', dev),
                'blkid finds no disk labelled %s: %r' % (label, dev))
        require(sh.run('test -b %s' % dev, ok=False)[0] == 0, '%s is not a block node' % dev)
    # Each NIC by its driver and bus; each gets the user network's lease.
    found = nics(sh)
    c.log.write('\n[boottest] NICs (name, driver, bus): %s\n' % found)
    vmx = [n for n, driver, bus in found if driver == 'vmxnet3']
    usb = [n for n, driver, bus in found if bus == 'usb']
    require(vmx, 'no network interface is driven by vmxnet3: %s' % found)
    require(usb, 'no network interface on USB: %s' % found)
    for nic in (vmx[0], usb[0]):
        lease(vm, sh, nic)
    check_nodes_from_kernel(sh)
    poweroff(vm)


# Every device node under /dev whose name or numbers are not the
# kernel's: devtmpfs makes a node at the path the kernel gives in the
# device's uevent (DEVNAME), for its major:minor; a node that some process
# made (mknod, udev, mdev) at another path or with other numbers shows.
# Only devtmpfs itself: /dev/pts is devpts, its nodes are its own.
FOREIGN_NODES = (
    'find /dev -xdev \\( -type b -o -type c \\) | while read -r n; do '
    't=char; [ -b "$n" ] && t=block; '
    'set -- $(stat -c "%t %T" "$n"); mm=$(printf "%d:%d" 0x$1 0x$2); '
    'name=$(sed -n "s/^DEVNAME=//p" /sys/dev/$t/$mm/uevent 2>/dev/null); '
    '[ "/dev/$name" = "$n" ] || echo "foreign: $n ($t $mm)"; done; true')


def foreign_nodes(sh):
    """The device nodes in /dev that devtmpfs did not make, and the count
    of all nodes."""
    out = sh.out(FOREIGN_NODES)
    count = int(sh.out('find /dev -xdev \\( -type b -o -type c \\) | wc -l').strip())
    return re.findall(r'foreign: ([^\n]*)', out), count


def check_nodes_from_kernel(sh):
    """Every node in /dev is the kernel's; and the check sees one that is
    not (a copy of /dev/null made with mknod), so that it cannot pass by
    seeing nothing."""
    foreign, count = foreign_nodes(sh)
    require(count > 20, 'only %d device nodes in /dev' % count)
    require(not foreign, 'nodes in /dev that devtmpfs did not make: %s' % foreign)
    sh.out('mknod /dev/not-from-devtmpfs c 1 3')
    foreign, _ = foreign_nodes(sh)
    sh.out('rm /dev/not-from-devtmpfs')
    require([f for f in foreign if f.startswith('/dev/not-from-devtmpfs ')],
            'the node check does not see a node made with mknod: %s' % foreign)


def nics(sh):
    """Each network interface on a device: (name, driver, bus), the driver
    "none" while none is bound."""
    out = sh.out('for n in /sys/class/net/*/device; do [ -e "$n" ] || continue; '
                 'i=${n%/device}; d=$(readlink $n/driver) || d=none; '
                 'b=$(readlink $n/subsystem); echo "nic ${i##*/} ${d##*/} ${b##*/}"; done; true')
    return [tuple(line.split()[1:]) for line in out.splitlines()
            if line.startswith('nic ') and len(line.split()) == 4]


def lease(vm, sh, nic, since=0):
    """`nic` gets QEMU's user network's lease with nothing typed: the
    udhcpc that rescue-init started for it says so on the console."""
    wait_since(vm, r'rescue-init: net: %s is 10\.0\.2\.15/24 via 10\.0\.2\.2' % re.escape(nic),
               'a DHCP lease on %s, nothing typed' % nic, since, 90)
    require('inet 10.0.2.15/24' in sh.out('ip -4 addr show %s' % nic),
            '%s has no 10.0.2.15/24' % nic)


def until(sh, cond, what, secs=30):
    """Poll shell condition `cond` once a second, up to `secs`."""
    status, _ = sh.run('i=0; until %s; do i=$((i+1)); [ $i -lt %d ] || break; sleep 1; '
                       'done; %s' % (cond, secs, cond), ok=False, secs=secs + 30)
    require(status == 0, 'after %d s, still not: %s' % (secs, what))


def plug_usb_nic(vm, sh, name):
    """device_add of a USB NIC at the prompt: the modules the loader says
    it loaded for it, and its interface once it has its lease."""
    since = len(vm.buf)
    vm.monitor('netdev_add user,id=%s' % name,
               'device_add usb-net,bus=xhci.0,netdev=%s,id=%s' % (name, name))
    loaded = wait_drivers(vm, NEW_DEVICE, since=since)
    require('usbnet' in loaded, 'the loader loaded no usbnet for the USB NIC: %s' % loaded)
    usb = [name for name, driver, bus in nics(sh) if bus == 'usb']
    require(len(usb) == 1, 'not one network interface on USB: %s' % usb)
    lease(vm, sh, usb[0], since)
    return loaded, usb[0]


def usb_keyboard(vm, sh):
    """A USB keyboard plugged in at the prompt: the console's keyboard
    handler takes it, and a command typed on it (QEMU's sendkey, whose
    keys go to the newest keyboard: its event node sees them) runs in the
    screen's shell."""
    vm.monitor('device_add usb-kbd,bus=xhci.0,id=hkbd')
    find = ("grep -A5 '^N: Name=\"QEMU QEMU USB Keyboard\"' /proc/bus/input/devices | "
            "sed -n 's/^H: Handlers=.*kbd.*\\(event[0-9]*\\).*/\\1/p'")
    until(sh, '[ -n "$(%s)" ]' % find, 'the USB keyboard is an input device with the kbd handler')
    event = sh.out(find).strip()
    require(re.fullmatch(r'event\d+', event), 'the USB keyboard has no event node: %r' % event)
    sh.out('(cat /dev/input/%s >/tmp/usb-keys &); sleep 1' % event)
    vm.type_keys('touch /tmp/typed-on-usb\n')
    until(sh, '[ -e /tmp/typed-on-usb ]', 'the command typed on the USB keyboard ran')
    require(int(sh.out('wc -c </tmp/usb-keys').strip() or 0) > 0,
            'the keys did not come through the USB keyboard (/dev/input/%s)' % event)
    sh.out('kill $(pidof cat) 2>/dev/null; true')


@test
def hotplug(c):
    """A USB stick, a USB NIC and a USB keyboard plugged in at the prompt
    (QEMU's device_add) work with nothing typed; the stick pulled out
    leaves no node behind."""
    stick = ext4_disk(c, 'stick.img', 'HOT-STICK')
    vm = c.machine(c.cdrom() + ['-device', 'qemu-xhci,id=xhci'], monitor=True)
    menu(vm, 'rescue')
    sh = boot_rescue(vm)
    before = set(sh.out('ls /dev').split())
    require(not [n for n in before if n.startswith('sd')], 'a disk before the stick: %s' % before)
    plug_usb_nic(vm, sh, 'hnic')
    vm.monitor('drive_add 0 if=none,id=hstick,format=raw,file=' + stick,
               'device_add usb-storage,bus=xhci.0,drive=hstick,id=hstick')
    until(sh, 'blkid -L HOT-STICK >/dev/null', 'blkid finds the stick\'s label')
    dev = sh.out('blkid -L HOT-STICK').strip()
    require(re.fullmatch(r'/dev/sd[a-z]+', dev), 'the stick is %r' % dev)
    sh.out('mount -o ro %s /mnt && ls /mnt && umount /mnt' % dev)
    vm.monitor('device_del hstick')
    until(sh, '[ ! -e %s ]' % dev, '%s is gone after device_del' % dev)
    after = set(sh.out('ls /dev').split())
    stale = sorted(n for n in after - before if n.startswith(('sd', 'sg', 'bsg')))
    require(not stale, 'nodes left in /dev after the stick was pulled: %s' % stale)
    usb_keyboard(vm, sh)
    check_nodes_from_kernel(sh)
    # Most uevents (a removal, a mount) name no driver: the loader says
    # nothing about them, and never runs modprobe with nothing to do.
    errors = re.findall(r'modprobe: [^\n]*', vm.buf)
    require(not errors, 'modprobe complained on the console: %s' % errors)
    poweroff(vm)


@test
def loader_restarts(c):
    """The module loader killed: PID 1 starts it again.  The USB NIC that
    the first loader brought up, pulled out, and its modules unloaded,
    then plugged in again: the new loader loads the modules again, and
    the NIC gets its lease again (the first loader's DHCP client does not
    stand in the way)."""
    vm = c.machine(c.cdrom() + ['-device', 'qemu-xhci,id=xhci'], monitor=True)
    menu(vm, 'rescue')
    sh = boot_rescue(vm)
    loaded, nic = plug_usb_nic(vm, sh, 'nic1')
    # The loader is PID 1's child that is not a shell: a fork of init.
    find = ('for p in /proc/[0-9]*; do [ "$(cut -d" " -f4 $p/stat 2>/dev/null)" = 1 ] && '
            '[ "$(readlink $p/exe 2>/dev/null)" = /sbin/init ] && echo ${p#/proc/}; done; true')
    pids = sh.out(find).split()
    require(len(pids) == 1, 'not one module loader among init\'s children: %s' % pids)
    # PID 1 restarts a loader that lived for 10 s (one that dies younger
    # would only die again).
    sh.out('while [ "$(cut -d. -f1 /proc/uptime)" -lt 12 ]; do sleep 1; done', secs=60)
    since = len(vm.buf)
    sh.out('kill -KILL %s' % pids[0])
    wait_since(vm, r'rescue-init: drivers: the module loader ended \(status 137\); '
               r'starting it again', 'the init restarting the loader', since, 30)
    again = sh.out(find).split()
    require(len(again) == 1 and again != pids, 'no new loader: %s, before %s' % (again, pids))
    vm.monitor('device_del nic1')
    until(sh, '[ ! -e /sys/class/net/%s ]' % nic, '%s is gone after device_del' % nic)
    sh.out('modprobe -r -a %s' % ' '.join(sorted(loaded)))
    require('usbnet' not in sh.out('cat /proc/modules'), 'usbnet still loaded')
    plug_usb_nic(vm, sh, 'nic2')
    poweroff(vm)


@test
def unbound_devices(c):
    """The banner names a disk controller and a NIC that no driver of this
    system claims (QEMU's LSI 53C895A and RTL8139) with their PCI IDs; not
    a NIC that has its driver (e1000).  A NIC whose module is here but was
    kept from loading (vmxnet3, modprobe.blacklist=) is named by the module
    loader, after coldplug, and not by the banner."""
    vm = c.machine(c.cdrom() + ['-device', 'lsi53c895a',
                                '-netdev', 'user,id=n1', '-device', 'rtl8139,netdev=n1',
                                '-netdev', 'user,id=n2', '-device', 'e1000,netdev=n2',
                                '-netdev', 'user,id=n3', '-device', 'vmxnet3,netdev=n3'])
    boot_line(vm, 'rescue modprobe.blacklist=vmxnet3')
    boot_rescue(vm)
    steps = vm.buf.find('first steps:')
    require(steps > 0, 'no banner ("first steps:") before the prompt')
    banner = vm.buf[:steps]
    for what, ids in (('disk controller', '1000:0012'), ('network controller', '10ec:8139')):
        require(re.search(r'rescue-init: no driver for the %s on PCI \S+ \[%s\]: '
                          r'what is behind it is out of reach' % (what, ids), banner),
                'the banner does not name the %s [%s]' % (what, ids))
    named = re.findall(r'rescue-init: no driver for [^\n]*', vm.buf)
    require(len(named) == 2, 'not exactly the two devices named: %s' % named)
    wait_since(vm, r'rescue-init: drivers: no driver took the network controller on PCI '
               r'\S+ \[15ad:07b0\], although one claims it',
               'the module loader naming the blacklisted vmxnet3 NIC', steps, 90)
    took = re.findall(r'rescue-init: drivers: no driver took [^\n]*', vm.buf)
    require(len(took) == 1, 'not only the vmxnet3 NIC named by the loader: %s' % took)
    poweroff(vm)


@test
def firmware(c):
    """The ISO carries Debian's firmware-linux-free as the package installs
    it.  A driver whose firmware is not there (e100's microcode for QEMU's
    i82559ER, in Debian's non-free firmware) leaves a line on the console
    that names the file, and its NIC works without it."""
    vm = c.machine(c.cdrom() + ['-netdev', 'user,id=n1', '-device', 'i82559er,netdev=n1'])
    menu(vm, 'rescue')
    sh = boot_rescue(vm)
    require('firmware-linux-free' in sh.out('cat /usr/share/rescue/packages'),
            'the manifest does not list firmware-linux-free')
    files = host(c, ['dpkg-query', '-L', 'firmware-linux-free']).stdout.split()
    files = sorted(f for f in files if f.startswith('/lib/firmware/') and os.path.isfile(f))
    require(files, 'the host lists no firmware of firmware-linux-free')
    on_iso = sorted(sh.out('find /lib/firmware -type f').split())
    require(on_iso == files, 'the ISO\'s /lib/firmware is not the package\'s: %s'
            % sorted(set(on_iso) ^ set(files)))
    for path in files:
        want = host(c, ['sha256sum', path]).stdout.split()[0]
        got = sh.out('sha256sum %s' % path).split()[0]
        require(got == want, '%s differs from the package\'s' % path)
    require('e100' in wait_drivers(vm, AT_BOOT), 'the init did not load e100')
    e100 = [name for name, driver, bus in nics(sh) if driver == 'e100']
    require(e100, 'no network interface is driven by e100')
    lease(vm, sh, e100[0])
    wait_since(vm, r'Direct firmware load for e100/d10\w+_ucode\.bin failed with error -2',
               'the kernel naming the missing e100 microcode', 0, 30)
    poweroff(vm)


# ---------------------------------------------------------------------------
# Module signatures


def iso_module(c, name):
    """The bytes of module `name` (say vmxnet3.ko) as the ISO carries it,
    inflated from zisofs by xorriso."""
    out = os.path.join(c.work, 'from-iso')
    r = host(c, ['xorriso', '-osirrox', 'on', '-indev', c.iso,
                 '-find', '/lib/modules', '-name', name, '-exec', 'lsdl', '--'])
    paths = re.findall(r"'(/lib/modules/[^']*/%s)'" % re.escape(name), r.stdout + r.stderr)
    require(paths, 'the ISO has no %s under /lib/modules' % name)
    r = host(c, ['xorriso', '-osirrox', 'on', '-indev', c.iso, '-extract', paths[0], out])
    require(r.returncode == 0, 'xorriso could not extract %s' % paths[0])
    with open(out, 'rb') as f:
        data = f.read()
    require(data[:4] == b'\x7fELF', '%s from the ISO is not an ELF file' % name)
    return data


def unsigned(data):
    """The module without its appended signature."""
    require(data.endswith(SIG_MAGIC), 'the module carries no signature')
    info = data[-len(SIG_MAGIC) - 12:-len(SIG_MAGIC)]
    sig_len = struct.unpack('>I', info[8:])[0]
    return data[:len(data) - len(SIG_MAGIC) - 12 - sig_len]


def signed_by_throwaway_key(c, body):
    """`body` signed as scripts/sign-file signs, with a key made here."""
    key = os.path.join(c.work, 'throwaway.key')
    cert = os.path.join(c.work, 'throwaway.crt')
    r = host(c, ['openssl', 'req', '-new', '-x509', '-newkey', 'rsa:2048', '-nodes',
                 '-sha256', '-days', '1', '-subj', '/CN=throwaway module key/',
                 '-keyout', key, '-out', cert])
    require(r.returncode == 0, 'openssl could not make a throwaway key')
    body_path = os.path.join(c.work, 'body.ko')
    with open(body_path, 'wb') as f:
        f.write(body)
    r = subprocess.run(['openssl', 'cms', '-sign', '-binary', '-noattr', '-nosmimecap',
                        '-nocerts', '-md', 'sha256', '-signer', cert, '-inkey', key,
                        '-in', body_path, '-outform', 'DER'], capture_output=True)
    require(r.returncode == 0 and r.stdout, 'openssl cms could not sign: %s' % r.stderr[-200:])
    info = struct.pack('>BBBBB3xI', 0, 0, PKEY_ID_PKCS7, 0, 0, len(r.stdout))
    return body + r.stdout + info + SIG_MAGIC


def module_disk(c, modules):
    """An ext4 image holding `modules` (file name -> bytes)."""
    tree = os.path.join(c.work, 'modules-tree')
    os.makedirs(tree, exist_ok=True)
    for name, data in modules.items():
        with open(os.path.join(tree, name), 'wb') as f:
            f.write(data)
    path = c.image('modules.img', 16)
    r = host(c, ['mke2fs', '-q', '-F', '-t', 'ext4', '-d', tree, path])
    require(r.returncode == 0, 'mke2fs -d failed: %s' % r.stderr.strip())
    return path


def signature_disk(c):
    """A disk with vmxnet3.ko from the ISO three times: unsigned.ko
    without its signature, foreign.ko signed with a throwaway key, and
    genuine.ko as the ISO has it."""
    genuine = iso_module(c, 'vmxnet3.ko')
    body = unsigned(genuine)
    return module_disk(c, {'unsigned.ko': body,
                           'foreign.ko': signed_by_throwaway_key(c, body),
                           'genuine.ko': genuine})


def check_signatures(sh, dev):
    """On the running rescue system, with signature_disk() at `dev`: the
    kernel enforces signatures, refuses the unsigned and the foreign
    module with its reason in dmesg, and loads the genuine one."""
    enforce = sh.out('cat /sys/module/module/parameters/sig_enforce').strip()
    require(enforce == 'Y', 'sig_enforce is %r, not Y' % enforce)
    sh.out('mount -o ro %s /mnt' % dev)
    for name, reason in (('unsigned', 'unsigned module'),
                         ('foreign', 'module with unavailable key')):
        status, out = sh.run('/sbin/insmod /mnt/%s.ko' % name, ok=False)
        require(status != 0, 'the kernel loaded the %s module' % name)
        require('Key was rejected by service' in out,
                'insmod of the %s module failed, but not as the signature check '
                'fails: %r' % (name, out.strip()[-200:]))
        said = "dmesg | grep -c 'Loading of %s is rejected'" % reason
        require(sh.out(said).strip() == '1',
                'dmesg does not say "Loading of %s is rejected" once' % reason)
        require('vmxnet3' not in sh.out('cat /proc/modules'),
                'vmxnet3 is loaded after the %s module was refused' % name)
    # The same code, as the ISO signed it, loads: the refusals were the
    # signatures'.
    sh.out('/sbin/insmod /mnt/genuine.ko')
    require(re.search(r'^vmxnet3 ', sh.out('cat /proc/modules'), re.M),
            'the ISO\'s own vmxnet3.ko did not load')
    sh.out('umount /mnt')


@test
def signed_modules_only(c):
    """The kernel enforces module signatures: a module signed with another
    key and an unsigned one are refused; the ISO's own copy loads.
    (secureboot.py checks the same under Secure Boot.)"""
    disk = signature_disk(c)
    vm = c.machine(c.cdrom() + ['-drive', 'if=virtio,format=raw,file=' + disk])
    menu(vm, 'rescue')
    sh = boot_rescue(vm)
    check_signatures(sh, '/dev/vda')
    poweroff(vm)


if __name__ == '__main__':
    sys.exit(main(__doc__))
