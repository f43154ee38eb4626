#!/usr/bin/python3
"""Take the README's screenshots: QEMU's screendump of the VGA screen.

    docs/screenshots.py ISO OUTDIR LOGDIR

Boots the ISO from a CD on the boot tests' BIOS machine (tests/qemu.py,
which has a VGA card), dumps the isolinux menu, picks the default entry
through the serial console, types a command on the VGA console's own shell
(QEMU sendkey) and dumps the screen again. Then boots it under OVMF with
Secure Boot on (Microsoft's keys) and dumps MokManager's file chooser with
the ISO's certificate selected (the README's enrollment). The console logs
go to LOGDIR/screenshots-*.log.
"""
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests'))
from qemu import MENU, MENU_LAST, MENU_TIMEOUT, Ctx, Fail, boot_rescue, poweroff  # noqa: E402

KEYS = {" ": "spc", "/": "slash", "-": "minus", "|": "shift-backslash",
        "\n": "ret", ".": "dot", "=": "equal",
        ";": "semicolon"}


def type_on_vga(vm, text):
    for ch in text:
        vm.monitor("sendkey " + KEYS.get(ch, ch))


def menu_and_shell(c, outdir):
    vm = c.machine(c.cdrom(), monitor=True)
    # Not menu(): the picture is taken while the countdown shows.
    vm.wait(re.escape(MENU_LAST), 'the whole isolinux menu', MENU_TIMEOUT)
    vm.wait('Booting the rescue system in', 'the menu countdown', 20)
    time.sleep(0.5)
    menu = os.path.join(outdir, "boot-menu.png")
    vm.monitor("screendump %s -f png" % menu)
    vm.send(MENU['rescue'][0])
    boot_rescue(vm)
    time.sleep(1)
    type_on_vga(vm, "mount -t devtmpfs; ls -l /dev/null /dev/sr0\n")
    time.sleep(2)
    shell = os.path.join(outdir, "rescue-shell.png")
    vm.monitor("screendump %s -f png" % shell)
    poweroff(vm)
    return [menu, shell]


def mokmanager(c, outdir):
    """GRUB's Enroll entry, then MokManager: Enroll key from disk, the ESP,
    EFI/, and the cursor on rescue.cer.  MokManager's cursor starts on the
    first row of each list; Down moves it."""
    vm = c.machine(c.cdrom(), uefi='ms', monitor=True)
    down = "\x1b[B"                     # cursor down on the serial console
    steps = [(MENU["mok"][1], MENU["mok"][0]),          # GRUB's Enroll entry
             ("Press any key to perform MOK management", " "),
             ("Enroll hash from disk", down + "\r"),     # Continue boot, Enroll key ...
             ("RESCUE_EFI", "\r"),                      # the only volume: the ESP
             ("boot/", "\r"),                           # EFI/, boot/
             ("rescue.cer", down + down)]               # ../, BOOT/, rescue.cer
    for text, keys in steps:
        vm.wait(re.escape(text), 'MokManager: ' + text, MENU_TIMEOUT)
        time.sleep(1)
        vm.send(keys)
    time.sleep(2)
    shot = os.path.join(outdir, "mokmanager.png")
    vm.monitor("screendump %s -f png" % shot)
    vm.stop()
    return [shot]


def main():
    iso, outdir, logdir = (os.path.abspath(p) for p in sys.argv[1:4])
    os.makedirs(outdir, exist_ok=True)
    shots = []
    for take in (menu_and_shell, mokmanager):
        c = Ctx('screenshots-' + take.__name__, iso, logdir)
        try:
            shots += take(c, outdir)
        except Fail as e:
            sys.exit('screenshots: %s (log: %s)' % (e, c.log_path))
        finally:
            c.close()
    print("".join("  SHOT      %s\n" % s for s in shots), end="")


if __name__ == "__main__":
    main()
